"""torch's op_db float32 CPU samples through irc vs eager, judged against tests/opinfo/expectations.json.

CI runs a fixed subset (sweep.ci_subset, the first CI_SAMPLES samples of each entry). The whole
table is `IRC_OPINFO_FULL=1 pytest -m slow tests/opinfo` or, faster and in parallel,
`python -m tests.opinfo.sweep` (add --write to regenerate the table). Gradients: test_opinfo_grad.py.
"""

import pytest

from irc import env

from . import judge
from .sweep import CI_BUDGET_S, CI_SAMPLES, FULL_BUDGET_S, FULL_SAMPLES, ci_subset, load_expectations, ops_by_key

TABLE = load_expectations()
OPS = ops_by_key()
FULL = env.get("IRC_OPINFO_FULL")


def check(key: str, samples: int, budget: float) -> None:
    from .harness import run_entry

    judge.check(run_entry, TABLE, OPS[key], key, samples, budget)


def test_table_covers_op_db():
    """Every op_db entry has a row with a known status (the rows' mismatches and errors fail the runs below)."""
    judge.assert_table_covers(TABLE, OPS, "expectations.json", "--write")


@pytest.mark.parametrize("key", ci_subset(TABLE))
def test_opinfo_ci(key):
    check(key, CI_SAMPLES, CI_BUDGET_S)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="the full op_db sweep runs with IRC_OPINFO_FULL=1")
@pytest.mark.parametrize(
    "key", sorted(k for k in OPS if TABLE.get(k, {}).get("status") != "untestable") if FULL else ["all"]
)
def test_opinfo_full(key):
    check(key, FULL_SAMPLES, FULL_BUDGET_S)
