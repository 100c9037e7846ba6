"""Gradients of torch's op_db float32 CPU samples through irc vs eager (grad.py), judged against
tests/opinfo/grad_expectations.json.

CI runs a fixed subset (sweep.GRAD_CI: sgn, scatter_reduce prod/mean/amax and a few common ops, one sample each).
The whole table is `IRC_OPINFO_FULL=1 pytest -m slow tests/opinfo/test_opinfo_grad.py` or, in parallel,
`python -m tests.opinfo.sweep --grad` (add --write to regenerate the table). No entry may give a mismatch or an
error, as in the forward sweep: a gradient irc gets wrong is a bug to fix, not a row to keep.
"""

import pytest

from irc import env

from . import judge
from .sweep import (
    GRAD_CI,
    GRAD_CI_BUDGET_S,
    GRAD_CI_SAMPLES,
    GRAD_EXPECTATIONS,
    GRAD_FULL_BUDGET_S,
    GRAD_FULL_SAMPLES,
    load_expectations,
    ops_by_key,
)

TABLE = load_expectations(GRAD_EXPECTATIONS)
OPS = ops_by_key()
FULL = env.get("IRC_OPINFO_FULL")


def check(key: str, samples: int, budget: float) -> None:
    from .grad import run_grad_entry

    judge.check(run_grad_entry, TABLE, OPS[key], key, samples, budget)


def test_grad_table_covers_op_db():
    """Every op_db entry has a row with a known status; every known failure and non-native row says why."""
    from .grad import differentiable

    judge.assert_table_covers(TABLE, OPS, "grad_expectations.json", "--grad --write")
    silent = sorted(k for k, v in TABLE.items() if v["status"] != "native" and not v["reason"])
    assert not silent, f"rows without a reason: {silent}"
    wrong = sorted(k for k in OPS if not differentiable(OPS[k]) and TABLE[k]["status"] != "untestable")
    assert not wrong, f"entries OpInfo does not differentiate in float32 have a gradient status: {wrong}"


def test_grad_ci_subset_is_differentiable_and_judged():
    """The CI entries are differentiable entries the table judges (not untestable), so the CI runs test something."""
    from .grad import differentiable

    assert all(differentiable(OPS[k]) for k in GRAD_CI)
    assert not [k for k in GRAD_CI if TABLE[k]["status"] == "untestable"]


@pytest.mark.parametrize("key", GRAD_CI)
def test_opinfo_grad_ci(key):
    check(key, GRAD_CI_SAMPLES, GRAD_CI_BUDGET_S)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="the full op_db gradient sweep runs with IRC_OPINFO_FULL=1")
@pytest.mark.parametrize(
    "key", sorted(k for k in OPS if TABLE.get(k, {}).get("status") != "untestable") if FULL else ["all"]
)
def test_opinfo_grad_full(key):
    check(key, GRAD_FULL_SAMPLES, GRAD_FULL_BUDGET_S)
