"""Every loop and mem op documents itself with an example that parses, verifies and round-trips.

The example is the docstring from its first line starting with `%`, `loop.` or `mem.` to the end (ops that
live inside a nest or an extern show a whole nest or extern around them), or the text after three spaces
in the first line.
"""

import inspect

import pytest

from irc.dialects import ALL_DIALECTS
from irc.dialects.loop import LoopDialect
from irc.dialects.memory import MemDialect
from irc.ir import make_context, parse_module, print_module
from irc.ir.examples import parse_example

OPS = [*LoopDialect.operations, *MemDialect.operations]


def example(op) -> str:
    lines = (inspect.getdoc(op) or "").splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(("%", "loop.", "mem.")):
            return "\n".join(lines[i:])
    return lines[0].split("   ", 1)[1] if lines and "   " in lines[0] else ""


@pytest.fixture(scope="module")
def ctx():
    return make_context(ALL_DIALECTS)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_docstring_example(ctx, op):
    text = example(op)
    assert text, f"{op.__name__}: the docstring needs an example"
    module = parse_example(ctx, text)
    assert any(type(o) is op for o in module.walk()), f"{op.__name__}'s example has no {op.name}"
    printed = print_module(module)
    assert print_module(parse_module(ctx, printed)) == printed
    generic = print_module(module, generic=True)
    assert print_module(parse_module(ctx, generic)) == printed


def test_names_are_namespaced_and_unique():
    names = [op.name for op in OPS]
    assert len(set(names)) == len(names)
    assert all(n.split(".")[0] in ("loop", "mem") for n in names)
