"""The OpInfo sweep in bfloat16 and float16: each op_db entry's CPU samples of the narrow dtype through irc, judged
by tests/numeric/low_precision.py against the same op run in float64 on the samples' tensors upcast exactly, with
eager's own narrow-dtype error as the yardstick (not eager's bits).

    .venv/bin/python -m tests.numeric.low_precision_opinfo                     # every entry, both dtypes
    .venv/bin/python -m tests.numeric.low_precision_opinfo --only add,softmax --dtype bf16 --samples 8

Statuses per entry and dtype: ok (every judged sample within the bound; the reason says how close the closest
came: irc's error over the bound, at most 1), mismatch, error (the compiled run raised
where eager did not and torch.compile with aot_eager does not), untestable (no sample of the dtype, random output,
eager or the float64 reference raising on every sample). The float32 sweep (tests/opinfo) judges nativeness and
fallbacks; this one judges numbers only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from itertools import islice
from multiprocessing import get_context

import torch

import irc
from tests.numeric.low_precision import LowPrecisionMismatch, assert_low_precision_close, upcast, worst_ratio
from tests.opinfo.compare import _Slot, clone_inputs, fill, split_tensors
from tests.opinfo.harness import RANDOM, Outcome, _short, _Timeout, entry_key, judge_samples

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
RANK = {s: i for i, s in enumerate(("untestable", "ok", "mismatch", "error"))}


def _ref_template(template, dtype):
    """The sample's non-tensor arguments for the float64 run: a `dtype=` of the narrow type becomes float64."""
    if isinstance(template, _Slot):
        return template
    if isinstance(template, torch.dtype):
        return torch.float64 if template in (dtype, torch.float32) else template
    if type(template) in (list, tuple):
        return type(template)(_ref_template(v, dtype) for v in template)
    if type(template) is dict:
        return {k: _ref_template(v, dtype) for k, v in template.items()}
    return template


def _fn(call, template):
    def fn(*tensors):
        i, a, k = fill(template, tensors)
        return call(i, *a, **k)

    return fn


def _run(fn, tensors, backend=None):
    mine = clone_inputs(tensors)
    torch.manual_seed(0)
    if backend is None:
        out = fn(*mine)
    else:
        torch._dynamo.reset()
        out = torch.compile(fn, backend=backend, dynamic=False)(*mine)
    return out, mine  # the inputs after the call: an op that writes one is judged on it too


def run_sample(op, sample, dtype) -> tuple[str, str]:
    """(status, reason) of one sample: ok, mismatch, error, skip (judges nothing) or untestable."""
    template, tensors = split_tensors((sample.input, sample.args, sample.kwargs))
    fn = _fn(op.op, template)
    try:
        eager = _run(fn, tensors)
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        return "skip", f"eager raises: {_short(e)}"
    try:
        ref = _run(_fn(op.op, _ref_template(template, dtype)), upcast(tensors))
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        return "skip", f"the float64 reference raises: {_short(e)}"
    try:
        assert_low_precision_close(eager, eager, ref)  # the reference has eager's structure, shapes
        assert_low_precision_close(_run(fn, tensors), eager, ref)  # and eager is deterministic
    except (LowPrecisionMismatch, ValueError) as e:
        return "skip", f"no float64 reference: {_short(e)}"
    try:
        got = _run(fn, tensors, backend=irc.backend)
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        try:
            _run(fn, tensors, backend="aot_eager")
        except Exception as e2:  # noqa: BLE001
            return "untestable", f"torch.compile(backend='aot_eager') fails too: {_short(e2)}"
        return "error", _short(e)
    try:
        assert_low_precision_close(got, eager, ref, where="(output, inputs after)")
    except LowPrecisionMismatch as e:
        return "mismatch", str(e)
    return "ok", f"worst ratio {worst_ratio(got, eager, ref):.2f}"


def _numel(sample) -> int:
    return sample.input.numel() if isinstance(sample.input, torch.Tensor) else 0


def run_entry(op, dtype, max_samples: int = 2, budget_s: float = 10.0, largest_of: int = 0) -> Outcome:
    """The worst outcome over at most `max_samples` samples of `dtype`, starting none after `budget_s`; with
    `largest_of`, the samples are the largest inputs of the first `largest_of` (OpInfo's first samples are often
    a single number)."""
    t0 = time.perf_counter()
    key = entry_key(op)
    if dtype not in op.supported_dtypes("cpu"):
        return Outcome("untestable", f"no {dtype} CPU support")
    if op.has_nondeterministic_output or key in RANDOM:
        return Outcome("untestable", "random or uninitialised output")
    torch.manual_seed(0)
    try:
        samples = list(islice(op.sample_inputs("cpu", dtype, requires_grad=False), largest_of or max_samples))
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"sample generation fails: {_short(e)}")
    if largest_of:
        samples = sorted(samples, key=_numel, reverse=True)[:max_samples]  # stable: the first of equal sizes
    if not samples:
        return Outcome("untestable", f"no {dtype} CPU samples")
    # "worst ratio r" of an ok sample: the closest call is the largest r (irc's error over the bound)
    closest = lambda reason: float(reason.split()[-1]) if reason.startswith("worst ratio") else 0.0
    return judge_samples(op, samples, lambda op, sample: run_sample(op, sample, dtype), t0, budget_s, RANK, closest)


_OPS: dict = {}


def _ops():
    if not _OPS:
        from tests.opinfo.sweep import ops_by_key

        _OPS.update(ops_by_key())
    return _OPS


def _job(key, dname, samples, budget):
    return key, dname, run_entry(_ops()[key], DTYPES[dname], samples, budget)


def main(argv=None) -> int:
    from tests.opinfo.sweep import _quiet, _worker_init

    p = argparse.ArgumentParser(
        prog="python -m tests.numeric.low_precision_opinfo", description=__doc__.splitlines()[0]
    )
    p.add_argument("--only", help="comma-separated entry names (default: every op_db entry)")
    p.add_argument("--dtype", choices=[*DTYPES, "both"], default="both")
    p.add_argument("--samples", type=int, default=4)
    p.add_argument("--budget", type=float, default=20.0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args(argv)
    _quiet()
    ops = _ops()
    keys = [k.strip() for k in a.only.split(",") if k.strip()] if a.only else sorted(ops)
    if unknown := [k for k in keys if k not in ops]:
        p.error(f"unknown entries: {', '.join(unknown)}")
    dnames = list(DTYPES) if a.dtype == "both" else [a.dtype]
    jobs = [(k, d) for k in keys for d in dnames]
    counts: dict[str, int] = {}
    bad = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.jobs, mp_context=get_context("fork"), initializer=_worker_init, initargs=(1,)) as pool:
        futures = {pool.submit(_job, k, d, a.samples, a.budget): (k, d) for k, d in jobs}
        for n, f in enumerate(as_completed(futures), 1):
            try:
                key, dname, out = f.result()
            except Exception as e:  # noqa: BLE001
                (key, dname), out = futures[f], Outcome("error", f"worker failed: {type(e).__name__}: {e}")
            counts[out.status] = counts.get(out.status, 0) + 1
            print(
                f"[{n}/{len(jobs)}] {out.status:10} {key} {dname}"
                f" ({out.samples} samples, {out.seconds:.1f}s) {out.reason}"
            )
            sys.stdout.flush()
            if out.status in ("mismatch", "error"):
                bad.append(f"{key} {dname}: {out.status}: {out.reason}")
    print(f"swept {len(jobs)} in {time.perf_counter() - t0:.0f} s: {counts}")
    for line in sorted(bad):
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
