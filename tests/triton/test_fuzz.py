"""A bounded Hypothesis profile of the fuzzer's program property on the Triton target (under the interpreter
without a GPU): random programs of irc's aten ops, compiled with options={"target": "triton"}, match eager, and every kernel
of theirs compiles for sm_90 ahead of time (tools/fuzz/properties.py: check_aot).
Derandomized (profile irc-fuzz-ci); a failure shrinks to a runnable reproducer. Open known bugs
(tools/fuzz/known.py) and programs torch cannot compile either are rejected, as in tests/fuzz."""

import logging
import warnings

import pytest
from hypothesis import given, reject

import irc.tools.fuzz.profiles  # noqa: F401  (registers the profiles)
from irc.tools.fuzz.known import known
from irc.tools.fuzz.profiles import profile
from irc.tools.fuzz.properties import FuzzFailure, Inconclusive, check_program
from irc.tools.fuzz.strategies import programs, training_programs


def check(p) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        level = logging.getLogger("irc").level
        logging.getLogger("irc").setLevel(logging.ERROR)
        try:
            check_program(p, passes=False, only=["triton"], timeout=300)
        except Inconclusive:
            reject()
        except FuzzFailure as f:
            if known(f) is None:
                raise
            reject()
        finally:
            logging.getLogger("irc").setLevel(level)


@profile(max_examples=20)
@given(programs())
def test_programs_match_eager_on_triton(p):
    check(p)


@profile(max_examples=5)
@given(training_programs())
def test_training_graphs_match_eager_on_triton(p):
    check(p)


def test_the_property_compiles_each_kernel_for_sm90(monkeypatch):
    """A block the interpreter runs but Triton's compiler rejects (48 lanes, not a power of two) passes the numeric
    comparison and fails the property's sm_90 compile, which names the graph, the kernel and the stage."""
    from irc.targets.triton import blocks
    from irc.tools.fuzz.programs import Input, Op, Program

    heuristic = blocks.heuristic
    monkeypatch.setattr(blocks, "heuristic", lambda *a, **k: {**heuristic(*a, **k), "XBLOCK": 48})
    p = Program(inputs=(Input((5, 7)),), ops=(Op("sigmoid", (0,), "torch.sigmoid({0})"),), outputs=(1,))
    with pytest.raises(FuzzFailure) as failure:
        check_program(p, passes=False, only=["triton"], timeout=300)
    assert failure.value.kind == "aot", failure.value.report()
    assert "does not compile for sm_90 [XBLOCK=48 RBLOCK=1 num_warps=" in failure.value.message
    assert "at stage frontend" in failure.value.message and failure.value.stage.startswith("mem (graph")
