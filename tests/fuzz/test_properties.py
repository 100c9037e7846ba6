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
