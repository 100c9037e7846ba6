"""Every tn op documents itself with one example line, and that example parses, verifies and round-trips.

The example is the line of the docstring that starts with `%`, or the text after three spaces in its
first line (`Sum.   %r = tn.sum %x dims = [1] : ...`). Ops are taken from TensorDialect, the
only op list, so a new op without a valid example fails here.
"""

import importlib
import inspect
import pkgutil

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.irdl import IRDLOperation

import irc.dialects.tensor as tn_package
from irc.dialects import ALL_DIALECTS, TensorDialect
from irc.ir import make_context, parse_module, print_module
from irc.ir.examples import parse_example

OPS = list(TensorDialect.operations)


def docstring_example(op: type[IRDLOperation]) -> str | None:
    lines = (inspect.getdoc(op) or "").splitlines()
    for line in lines:
        if line.strip().startswith("%"):
            return line.strip()
    if lines and "   " in lines[0]:
        return lines[0].split("   ", 1)[1].strip()
    return None


def as_function(module: ModuleOp, name: str) -> ModuleOp:
    """The example's op inside `func.func @name(<its operands>) -> <its results>`, a module that prints and parses."""
    old = module.body.block
    op = old.first_op
    assert op is not None and op.next_op is None, "an example is exactly one op"
    op.detach()
    block = Block(arg_types=[a.type for a in old.args])
    for a, b in zip(old.args, block.args):
        b.name_hint = a.name_hint
        a.replace_all_uses_with(b)
    block.add_ops([op, func.ReturnOp(*op.results)])
    signature = ([a.type for a in block.args], [r.type for r in op.results])
    return ModuleOp([func.FuncOp(name, signature, Region(block))])


def defined_tn_ops() -> list[type[IRDLOperation]]:
    """Every concrete tn op class defined anywhere in irc.dialects.tensor (registered or not)."""
    found = []
    for info in pkgutil.iter_modules(tn_package.__path__):
        module = importlib.import_module(f"{tn_package.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ == module.__name__
                and issubclass(cls, IRDLOperation)
                and str(getattr(cls, "name", "")).startswith("tn.")
            ):
                found.append(cls)
    return found


@pytest.fixture(scope="module")
def ctx():
    return make_context(ALL_DIALECTS)


def test_every_defined_tn_op_is_registered():
    registered = set(OPS)
    missing = sorted(f"{c.__module__}.{c.__name__} ({c.name})" for c in defined_tn_ops() if c not in registered)
    assert not missing, (
        "tn ops defined but missing from TensorDialect (so irc-opt cannot parse them):\n  " + "\n  ".join(missing)
    )


def test_op_names_are_unique_and_namespaced():
    names = [op.name for op in OPS]
    assert len(names) == len(set(names))
    assert all(n.startswith("tn.") for n in names)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_docstring_example(ctx, op):
    example = docstring_example(op)
    assert example, f"{op.__name__}: the docstring needs an example line (`%r = {op.name} ...`)"
    module = parse_example(ctx, example)  # parses and verifies the op
    parsed = module.body.block.first_op
    assert type(parsed) is op, f"{op.__name__}'s example parses to {type(parsed).__name__}"

    text = print_module(as_function(module, op.name.removeprefix("tn.")))
    again = parse_module(ctx, text)
    again.verify()
    assert print_module(again) == text, "print -> parse -> print is not stable"
    generic = print_module(again, generic=True)
    assert print_module(parse_module(ctx, generic)) == text, "generic print -> parse -> print differs"
