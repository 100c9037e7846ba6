"""Parse a one-line op example whose operands are not defined, as docstrings write them.

Each undefined `%name` becomes an argument of the enclosing block, typed by its use, so
`%r = tn.neg %x : tensor<4xf32>` parses to a module with a block argument `%x: tensor<4xf32>`.
"""

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.parser import Parser


def parse_example(ctx: Context, line: str) -> ModuleOp:
    parser = Parser(ctx, line, "<example>")
    op = parser.parse_op()
    block = Block()
    for name, refs in parser.forward_ssa_references.items():
        for ref in refs.values():
            arg = block.insert_arg(ref.type, len(block.args))
            arg.name_hint = name
            ref.replace_all_uses_with(arg)
    parser.forward_ssa_references.clear()
    block.add_op(op)
    module = ModuleOp(Region(block))
    op.verify()
    return module
