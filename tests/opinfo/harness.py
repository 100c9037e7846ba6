"""Run one OpInfo entry's float32 CPU samples through torch.compile(backend=irc.backend) and classify it.

An entry without float32 support (integer and bitwise ops) runs its samples of the first dtype of
OTHER_DTYPES it supports instead, and its reason names that dtype.

Statuses, worst last:
  untestable  no sample can judge irc (no float32 CPU samples, random or uninitialised output, eager
              raises on every sample, or torch.compile itself fails or differs with a torch backend)
  native      every graph irc compiled ran fully natively (no tn.aten_call, no eager graph, no graph break)
  fallback    results match, but some node, graph or frame ran eagerly (the reason says which)
  mismatch    a compiled result differs from eager
  error       the compiled run raised where eager did not, or irc hit an internal error
"""

import signal
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice

import torch
from torch._dynamo.utils import counters

import irc
from irc import report

from .compare import Mismatch, assert_same, clone_inputs, fill, split_tensors

STATUSES = ("untestable", "native", "fallback", "mismatch", "error")
RANK = {s: i for i, s in enumerate(STATUSES)}

# Ops whose eager output is random or uninitialised memory even when OpInfo does not flag it.
RANDOM = {
    "bernoulli",
    "cauchy",
    "exponential",
    "geometric",
    "log_normal",
    "multinomial",
    "normal",
    "normal.in_place",
    "normal.number_mean",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "uniform",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
    "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d",
    "nn.functional.rrelu",
    "svd_lowrank",
    "pca_lowrank",
}

# For entries that do not support float32, in order of preference.
OTHER_DTYPES = (torch.int64, torch.int32, torch.bool, torch.uint8, torch.float64, torch.complex64)

SAMPLE_TIMEOUT_S = 120  # a single sample past this is a hang, reported as an error


@dataclass
class Outcome:
    status: str
    reason: str = ""
    samples: int = 0  # samples that judged irc
    seconds: float = 0.0


class _Timeout(Exception):
    pass


def entry_key(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _short(e: BaseException, limit: int = 160) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    if lines and lines[0].rstrip().endswith("raised:") and len(lines) > 1:  # BackendCompilerFailed: say what it raised
        lines = [lines[0].rstrip() + " " + lines[1]]
    text = f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextmanager
def _deadline(seconds: int):
    def alarm(signum, frame):
        raise _Timeout(f"sample ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _make_fn(op, sample):
    """(fn, tensors): a fresh function of the sample's tensors alone; every other argument is a constant of it."""
    template, tensors = split_tensors((sample.input, sample.args, sample.kwargs))
    call = op.op

    def fn(*tensors):
        i, a, k = fill(template, tensors)
        return call(i, *a, **k)

    return fn, tensors


def _run(fn: Callable, tensors, backend=None, seed: int = 0):
    """(output, inputs after the call) of fn on fresh clones, eagerly or through torch.compile."""
    mine = clone_inputs(tensors)
    torch.manual_seed(seed)
    if backend is None:
        out = fn(*mine)
    else:
        torch._dynamo.reset()
        out = torch.compile(fn, backend=backend, dynamic=False)(*mine)
    return out, mine


def _differs(a, b, **kw) -> str | None:
    try:
        assert_same(a, b, **kw)
    except Mismatch as e:
        return str(e)
    return None


def _irc_findings(graphs: list[report.GraphReport], breaks: list[str]) -> tuple[str, str]:
    """(status, reason) of one compiled sample from the reports and Dynamo's graph breaks."""
    for g in graphs:
        if g.eager_graph and g.eager_graph.startswith("internal error"):
            return "error", f"irc {g.eager_graph}"
        # A lowering bug hidden by the fallback to the reference target is an internal error all the same.
        for what, why in g.target_fallbacks:
            if why.startswith("lowering failed"):
                return "error", f"irc {g.kind} graph: {why}"
    for g in graphs:
        if g.eager_graph:
            return "fallback", f"graph runs eagerly: {g.eager_graph}"
    targets = sorted({f"{t} ({r})" for g in graphs for t, r in g.fallbacks})
    if targets:
        return "fallback", "eager nodes: " + "; ".join(targets)
    if breaks:
        return "fallback", f"Dynamo graph break: {breaks[0].splitlines()[0][:160]}"
    if not graphs:
        return "untestable", "no graph reached irc"
    return "native", ""


def _torch_backend_verdict(fn, tensors, expected) -> str | None:
    """Why a sample says nothing about irc: torch.compile with a torch backend fails or differs too."""
    try:
        out, after = _run(fn, tensors, backend="aot_eager")
    except Exception as e:  # noqa: BLE001
        return f"torch.compile(backend='aot_eager') fails too: {_short(e)}"
    if diff := _differs((out, after), expected):
        return f"torch.compile(backend='aot_eager') differs from eager too: {diff}"
    return None


def run_sample(op, sample) -> tuple[str, str]:
    fn, tensors = _make_fn(op, sample)
    try:
        ref = _run(fn, tensors)
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        return "skip", f"eager raises: {_short(e)}"
    try:
        again = _run(fn, tensors, seed=1)
    except Exception as e:  # noqa: BLE001
        return "skip", f"eager raises on a second run: {_short(e)}"
    if _differs(again, ref):
        return "untestable", "nondeterministic: two eager runs differ"

    counters.clear()
    start = report.mark()
    try:
        got = _run(fn, tensors, backend=irc.backend)
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        if verdict := _torch_backend_verdict(fn, tensors, ref):
            return "untestable", verdict
        return "error", _short(e)
    graphs = report.reports_since(start).graphs
    breaks = sorted(counters["graph_break"])
    diff = _differs(got, ref)
    if diff and diff.startswith("dtype"):  # equal values, other dtype: accept only where torch's own stack agrees
        try:
            torch_out = _run(fn, tensors, backend="aot_eager")
            if not _differs(got, torch_out):
                diff = None
        except Exception:  # noqa: BLE001
            pass
    if diff:
        if verdict := _torch_backend_verdict(fn, tensors, ref):
            return "untestable", verdict
        status, why = _irc_findings(graphs, breaks)
        where = "natively" if status == "native" else why
        return "mismatch", f"{diff} [{where}]"
    return _irc_findings(graphs, breaks)


def run_entry(op, max_samples: int = 3, budget_s: float = 10.0) -> Outcome:
    """Classify one OpInfo entry from at most `max_samples` samples, starting no new sample after `budget_s`."""
    t0 = time.perf_counter()
    key = entry_key(op)
    supported = op.supported_dtypes("cpu")
    dtype = next((d for d in (torch.float32, *OTHER_DTYPES) if d in supported), None)
    if dtype is None:
        return Outcome("untestable", f"no CPU support for float32 or {', '.join(str(d)[6:] for d in OTHER_DTYPES)}")
    if op.has_nondeterministic_output or key in RANDOM:
        return Outcome("untestable", "random or uninitialised output")
    torch.manual_seed(0)
    try:
        samples = list(islice(op.sample_inputs("cpu", dtype, requires_grad=False), max_samples))
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"sample generation fails: {_short(e)}")
    if not samples:
        return Outcome("untestable", f"no {str(dtype)[6:]} CPU samples")

    worst = judge_samples(op, samples, run_sample, t0, budget_s)
    if dtype != torch.float32:
        worst.reason = f"{str(dtype)[6:]} samples" + (f": {worst.reason}" if worst.reason else "")
    return worst


def judge_samples(op, samples, run, t0: float, budget_s: float, rank=RANK, closest=None) -> Outcome:
    """The worst outcome of `run(op, sample)` over the samples (until the budget is spent, after one judged
    sample), statuses ordered by `rank`: a sample that is skipped or untestable judges nothing; each runs under
    SAMPLE_TIMEOUT_S. `closest` (a key on reasons), where given, keeps among samples of the same status the reason
    of the one that came closest to the next (the low-precision sweep's largest error ratio)."""
    worst, used, skipped = Outcome("untestable", "no sample judged irc"), 0, []
    for sample in samples:
        if used and time.perf_counter() - t0 > budget_s:
            break
        try:
            with _deadline(SAMPLE_TIMEOUT_S):
                status, reason = run(op, sample)
        except _Timeout as e:
            status, reason = "error", str(e)
        finally:
            torch._dynamo.reset()
        if status == "skip":
            skipped.append(reason)
            continue
        if status == "untestable":
            if worst.status == "untestable":
                worst.reason = reason
            continue
        used += 1
        if rank[status] > rank[worst.status]:
            worst = Outcome(status, reason)
        elif closest is not None and status == worst.status:
            worst.reason = max(worst.reason, reason, key=closest)
    if worst.status == "untestable" and skipped and not used and worst.reason == "no sample judged irc":
        worst.reason = skipped[0]
    worst.samples, worst.seconds = used, time.perf_counter() - t0
    return worst
