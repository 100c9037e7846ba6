"""The fuzzer's properties on the bounded CI sample (profile irc-fuzz-ci: derandomized, no database).

A failure is shrunk and printed as a runnable reproducer plus the .mlir of the first failing stage.
Failures of open known bugs (tools/fuzz/known.py) and programs torch cannot compile either are skipped.
"""

from hypothesis import given, reject
from hypothesis import strategies as st

from irc.tools.fuzz.frontdoor import FLAGS, check_front_door, mutated
from irc.tools.fuzz.known import known
from irc.tools.fuzz.profiles import profile
from irc.tools.fuzz.properties import FuzzFailure, Inconclusive, check_program
from irc.tools.fuzz.strategies import programs, training_programs


def check(p) -> None:
    try:
        check_program(p, timeout=300)
    except Inconclusive:
        reject()
    except FuzzFailure as f:
        if known(f) is None:
            raise
        reject()


@profile(max_examples=30)
@given(programs())
def test_programs_match_eager_on_every_target_and_after_every_pass(p):
    check(p)


@profile(max_examples=10)
@given(training_programs())
def test_training_graphs_match_eager_gradients(p):
    check(p)


@profile(max_examples=200)
@given(mutated(), st.sampled_from(FLAGS))
def test_irc_opt_answers_broken_text_with_a_located_diagnostic(text, flags):
    check_front_door(text, flags)


def test_a_hang_inside_native_code_ends_the_process_with_its_stack():
    """SIGALRM's Hang cannot interrupt native code; the hard limit (HARD_LIMIT times the limit) ends the process
    with faulthandler's stacks instead of letting a campaign sit on one example (seed 1001 sat 15 minutes)."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import ctypes
        from irc.targets.cpu.runtime.jit import compile_module
        from irc.tools.fuzz.properties import time_limit
        spin = compile_module("define void @spin() {\\nentry:\\n  br label %loop\\nloop:\\n  br label %loop\\n}\\n",
                              use_cache=False)
        with time_limit(0.5):
            ctypes.CFUNCTYPE(None)(spin.address("spin"))()
        print("returned")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "returned" not in done.stdout
    assert "Timeout" in done.stderr, done.stderr[-2000:]


def test_a_compile_slower_than_the_limit_fails(monkeypatch):
    """The compile-time property: a graph whose compile takes longer than COMPILE_LIMIT_S is a failure of its own
    kind, named with its stage times, though its values are right; under the limit the same program passes."""
    import pytest

    from irc.tools.fuzz import properties
    from irc.tools.fuzz.programs import Input, Op, Program

    p = Program((Input((3, 5), seed=0),), (Op("exp", (0,), "torch.exp({0})"),), (1,))
    check_program(p, passes=False, only=["cpu"])
    monkeypatch.setattr(properties, "COMPILE_LIMIT_S", 0.0)
    with pytest.raises(FuzzFailure) as info:
        check_program(p, passes=False, only=["cpu"])
    assert info.value.kind == "slow-compile", info.value.report()
    assert "limit 0 s" in info.value.message and "llvm" in info.value.message, info.value.message
