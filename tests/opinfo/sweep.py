"""The OpInfo sweep: every op_db entry's float32 CPU samples through irc, classified against eager.

    .venv/bin/python -m tests.opinfo.sweep --write          # full sweep, rewrite expectations.json
    .venv/bin/python -m tests.opinfo.sweep --only abs,cat    # a few entries, print only
    .venv/bin/python -m tests.opinfo.sweep --ci             # the CI subset, compared with the table
    .venv/bin/python -m tests.opinfo.sweep --grad ...       # the same over gradients (grad.py, grad_expectations.json)

The table (expectations.json, one line per entry) holds each entry's status and reason; the pytest
module tests/opinfo/test_opinfo.py fails on any mismatch or error and on any native entry that regresses.
The gradient mode's table is grad_expectations.json, its tests tests/opinfo/test_opinfo_grad.py.
"""

import argparse
import json
import logging
import os
import sys
import time
import zlib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

EXPECTATIONS = Path(__file__).with_name("expectations.json")
GRAD_EXPECTATIONS = Path(__file__).with_name("grad_expectations.json")
FULL_SAMPLES, FULL_BUDGET_S = 8, 20.0  # per entry in the full sweep
CI_SAMPLES, CI_BUDGET_S = 2, 3.0  # per entry in the CI subset
CI_MODULUS = 7  # the CI subset: testable entries whose crc32(name) % CI_MODULUS == 0
# The gradient CI subset: fixed entries (issue 18's sgn and scatter_reduce prod/mean among them), one sample each.
GRAD_CI = ("sgn", "scatter_reduce.prod", "scatter_reduce.mean", "scatter_reduce.amax", "mul", "sum", "softmax")
GRAD_CI_SAMPLES, GRAD_CI_BUDGET_S = 1, 5.0
GRAD_FULL_SAMPLES, GRAD_FULL_BUDGET_S = 3, 8.0  # a forward and a backward graph per sample: fewer than the forward's


def _quiet() -> None:
    """The sweep reports every outcome itself; irc's and Dynamo's warnings would only bury it."""
    for name in ("irc", "torch._dynamo", "torch._functorch", "torch.fx"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    import warnings

    warnings.filterwarnings("ignore")


def ops_by_key() -> dict:
    try:
        import expecttest  # noqa: F401  (torch's test utilities import it)
    except ImportError:  # pragma: no cover - a stand-in so op_db loads without the test-only package
        import types
        import unittest

        sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)
    from torch.testing._internal.common_methods_invocations import op_db

    from .harness import entry_key

    return {entry_key(op): op for op in op_db}


def load_expectations(path: Path = EXPECTATIONS) -> dict[str, dict]:
    return json.loads(path.read_text()) if path.exists() else {}


def write_expectations(table: dict[str, dict], path: Path = EXPECTATIONS) -> None:
    lines = [f"  {json.dumps(k)}: {json.dumps(table[k], sort_keys=True)}" for k in sorted(table)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")


def ci_subset(table: dict[str, dict]) -> list[str]:
    """A fixed selection of testable entries, chosen by a stable hash of the name."""
    return sorted(
        k for k, v in table.items() if v["status"] != "untestable" and zlib.crc32(k.encode()) % CI_MODULUS == 0
    )


_OPS: dict = {}


def _worker_init(threads: int) -> None:
    """Quiet the logs and pay the one-off costs (Dynamo, AOT, irc imports) before the first entry's clock starts."""
    import torch

    import irc

    torch.set_num_threads(threads)
    _quiet()
    torch._dynamo.reset()
    torch.compile(lambda x: (x + 1).sum(0), backend=irc.backend, dynamic=False)(torch.ones(2, 3))
    torch._dynamo.reset()


def _run_key(key: str, samples: int, budget: float, grad: bool = False):
    from .grad import run_grad_entry
    from .harness import run_entry

    if not _OPS:
        _OPS.update(ops_by_key())
    out = (run_grad_entry if grad else run_entry)(_OPS[key], max_samples=samples, budget_s=budget)
    return key, out


def sweep(keys: list[str], *, samples: int, budget: float, jobs: int, grad: bool = False, log=print) -> dict:
    """Run the entries (in `jobs` processes) and return {key: Outcome}, logging one line per entry."""
    results = {}
    t0 = time.perf_counter()
    width = len(str(len(keys)))

    def done(key, out):
        results[key] = out
        reason = f"  {out.reason}" if out.reason else ""
        log(
            f"[{len(results):{width}}/{len(keys)}] {out.status:10} {key} ({out.samples} samples, {out.seconds:.1f}s){reason}"
        )

    if jobs <= 1:
        _worker_init(max(1, os.cpu_count() or 1))
        for key in keys:
            done(*_run_key(key, samples, budget, grad))
    else:
        _OPS.update(ops_by_key())  # loaded once, inherited by the forked workers
        ctx = get_context("fork")
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init, initargs=(1,)) as pool:
            futures = {pool.submit(_run_key, k, samples, budget, grad): k for k in keys}
            for f in as_completed(futures):
                try:
                    done(*f.result())
                except Exception as e:  # noqa: BLE001  (a worker died: record it, keep going)
                    from .harness import Outcome

                    done(futures[f], Outcome("error", f"sweep worker failed: {type(e).__name__}: {e}"))
    log(f"swept {len(keys)} entries in {time.perf_counter() - t0:.0f} s")
    return results


def summary(results: dict) -> str:
    counts = Counter(o.status for o in results.values())
    from .harness import STATUSES

    return ", ".join(f"{counts.get(s, 0)} {s}" for s in ("native", "fallback", "mismatch", "error", "untestable")) + (
        "" if set(counts) <= set(STATUSES) else f" (unknown statuses: {set(counts) - set(STATUSES)})"
    )


def regressions(results: dict, table: dict) -> list[str]:
    """Entries that are mismatch/error now, or were native and no longer are."""
    bad = []
    for key, out in sorted(results.items()):
        was = table.get(key, {}).get("status")
        if out.status in ("mismatch", "error"):
            bad.append(f"{key}: {out.status}: {out.reason}")
        elif was == "native" and out.status != "native":
            bad.append(f"{key}: regressed from native to {out.status}: {out.reason}")
    return bad


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.opinfo.sweep", description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="write the outcomes to expectations.json")
    p.add_argument("--only", help="comma-separated entry names (default: every op_db entry)")
    p.add_argument("--ci", action="store_true", help="only the CI subset, with the CI sample limits")
    p.add_argument("--grad", action="store_true", help="gradients (grad.py) against grad_expectations.json")
    p.add_argument("--samples", type=int, help="samples per entry")
    p.add_argument("--budget", type=float, help="seconds per entry after which no new sample starts")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    a = p.parse_args(argv)
    _quiet()

    path = GRAD_EXPECTATIONS if a.grad else EXPECTATIONS
    table = load_expectations(path)
    ops = ops_by_key()
    if a.only:
        keys = [k.strip() for k in a.only.split(",") if k.strip()]
        if unknown := [k for k in keys if k not in ops]:
            p.error(f"unknown entries: {', '.join(unknown)}")
    elif a.ci:
        keys = list(GRAD_CI) if a.grad else ci_subset(table)
    else:
        keys = sorted(ops)
    ci_samples, ci_budget = (GRAD_CI_SAMPLES, GRAD_CI_BUDGET_S) if a.grad else (CI_SAMPLES, CI_BUDGET_S)
    full_samples, full_budget = (GRAD_FULL_SAMPLES, GRAD_FULL_BUDGET_S) if a.grad else (FULL_SAMPLES, FULL_BUDGET_S)
    samples = a.samples or (ci_samples if a.ci else full_samples)
    budget = a.budget or (ci_budget if a.ci else full_budget)
    results = sweep(keys, samples=samples, budget=budget, jobs=min(a.jobs, len(keys)), grad=a.grad)
    print(summary(results))
    for line in regressions(results, table):
        print("  " + line)
    if a.write:
        if not a.only and not a.ci:
            table = {k: v for k, v in table.items() if k in ops}
        table.update({k: {"status": o.status, "reason": o.reason} for k, o in results.items()})
        write_expectations(table, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
