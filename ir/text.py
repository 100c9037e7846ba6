"""Text in and out: parse MLIR source into a module, print a module back (pretty or generic)."""

from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer


def parse_module(ctx: Context, source: str, name: str = "<input>") -> ModuleOp:
    """Parse `source`; raises xdsl's ParseError (which carries file:line:col) on bad input."""
    module = Parser(ctx, source, name).parse_module()
    return module


def print_module(op: Operation, *, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue() + "\n"
