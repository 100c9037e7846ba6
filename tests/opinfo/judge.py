"""What the forward and the gradient sweeps assert of one entry and of their tables (test_opinfo.py,
test_opinfo_grad.py): no mismatch or error ever, a native row stays native, every op_db entry has a known row."""

from .harness import STATUSES


def check(run_entry, table: dict, op, key: str, samples: int, budget: float) -> None:
    """run_entry(op, max_samples=, budget_s=) -> Outcome, judged against the entry's row."""
    expected = table.get(key, {"status": "untestable", "reason": "not in the table"})
    out = run_entry(op, max_samples=samples, budget_s=budget)
    assert out.status not in ("mismatch", "error"), f"{key}: {out.status}: {out.reason}"
    if expected["status"] == "native":
        assert out.status == "native", f"{key} regressed from native to {out.status}: {out.reason}"


def assert_table_covers(table: dict, ops: dict, name: str, regenerate: str) -> None:
    """Every op_db entry has a row in `name`, each with a known status."""
    missing = sorted(set(ops) - set(table))
    assert not missing, f"entries missing from {name} (run the sweep with {regenerate}): {missing}"
    unknown = {k: v["status"] for k, v in table.items() if v["status"] not in STATUSES}
    assert not unknown, f"unknown statuses: {unknown}"
