"""A bounded Hypothesis profile of the fuzzer's program property on the Triton target (under the interpreter
without a GPU): random programs of irc's aten ops, compiled with options={"target": "triton"}, match eager.
Derandomized (profile irc-fuzz-ci); a failure shrinks to a runnable reproducer. Open known bugs
(tools/fuzz/known.py) and programs torch cannot compile either are rejected, as in tests/fuzz."""

import logging
import warnings

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
