"""ir.passes.on_fresh_stack and the loop and mem stages that run on it: the passes run at the same shallow depth of a
thread of their own whatever depth the caller calls from (CPython 3.11 mapped and unmapped a frame-stack chunk per call
where a hot call landed on a chunk's start, which depended on the caller's depth), with the caller's contextvars, their
value returned and their exception raised in the caller."""

import contextvars
import inspect
import threading

import pytest
from xdsl.passes import ModulePass

from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module
from irc.ir.passes import Instrument, on_fresh_stack
from irc.lowering import pipeline

SETTING = contextvars.ContextVar("setting", default="unset")

PROGRAM = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tn.exp %x : tensor<4x8xf32>
  %s = tn.sum %e dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  %r = tn.reshape %s : tensor<4x1xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def test_the_value_the_exception_and_the_contextvars_cross_over():
    caller = threading.get_ident()
    token = SETTING.set("the caller's")
    try:
        assert on_fresh_stack(lambda: (SETTING.get(), threading.get_ident() != caller)) == ("the caller's", True)

        def fail():
            raise KeyError("from the passes")

        with pytest.raises(KeyError, match="from the passes"):
            on_fresh_stack(fail)
    finally:
        SETTING.reset(token)


class Depths(Instrument):
    """The Python stack depth at which each pass starts."""

    def __init__(self):
        self.depths: dict[str, int] = {}

    def before(self, p: ModulePass, module) -> None:
        self.depths.setdefault(p.name, len(inspect.stack(0)))


def _depths_from(depth: int) -> dict[str, int]:
    """The passes' depths when pipeline.run is called `depth` frames deeper than here."""
    if depth > 0:
        return _depths_from(depth - 1)
    module = parse_module(make_context(ALL_DIALECTS), PROGRAM)
    seen = Depths()
    pipeline.run(module, instruments=[seen])
    return seen.depths


def test_the_loop_and_mem_passes_run_at_a_depth_the_caller_does_not_change():
    shallow, deep = _depths_from(0), _depths_from(150)
    lowering = [p.name for p in (*pipeline.LOOP, *pipeline.MEM)]
    assert all(deep[name] == shallow[name] < 40 for name in lowering), (shallow, deep)
    # tensor-opt stays on the caller's thread (select-layout measures torch's convolutions with its thread count)
    assert all(deep[p.name] >= shallow[p.name] + 150 for p in pipeline.TENSOR_OPT), (shallow, deep)
