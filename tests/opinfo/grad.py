"""The gradient mode of the OpInfo sweep: an entry's float32 samples with requires_grad=True, forward and
backward through torch.compile(backend=irc.backend), against eager's outputs and input gradients.

An entry is swept here when OpInfo says it is differentiable in float32 on the CPU
(`supports_autograd` and float32 among `supported_backward_dtypes("cpu")`). Each sample is the
function of its tensors that harness.py compiles; the outputs go through the sample's
`output_process_fn_grad` (as OpInfo's own gradient tests do), and the input gradients come from
`torch.autograd.grad` with random cotangents of a fixed seed (zeros where an input is unused). The
statuses and their order are the forward sweep's (harness.STATUSES); the reasons name what fell back
in the forward or the backward graph.
"""

import time
from itertools import islice

import torch
from torch._dynamo.utils import counters

import irc
from irc import report

from .compare import Mismatch, assert_same, clone_inputs
from .harness import RANDOM, Outcome, _irc_findings, _make_fn, _short, _Timeout, entry_key, judge_samples


class _NoGradient(Exception):
    """The sample has no output that eager differentiates: it says nothing about gradients."""


def differentiable(op) -> bool:
    return bool(op.supports_autograd) and torch.float32 in op.supported_backward_dtypes("cpu")


def _leaves(tensors):
    return [t for t in tensors if t.requires_grad]


def _grad_run(fn, tensors, process, backend=None, seed: int = 0):
    """(outputs, input gradients) of one forward and backward, eagerly or through torch.compile."""
    mine = clone_inputs(tensors)
    torch.manual_seed(seed)
    if backend is None:
        out = fn(*mine)
    else:
        torch._dynamo.reset()
        out = torch.compile(fn, backend=backend, dynamic=False)(*mine)
    flat = [o for o in _flatten(process(out)) if isinstance(o, torch.Tensor) and o.requires_grad]
    if not flat:
        if backend is None:
            raise _NoGradient("no output requires grad")
        raise Mismatch("no output requires grad where eager's do")
    gen = torch.Generator().manual_seed(1234)
    cotangents = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in flat]
    leaves = _leaves(mine)
    grads = torch.autograd.grad(flat, leaves, cotangents, allow_unused=True, materialize_grads=True)
    return [o.detach() for o in flat], list(grads)


def _flatten(x):
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flatten(v)]
    return [x]


def _compare(got, ref) -> str | None:
    """The first difference of (outputs, gradients) from eager's, outputs first."""
    try:
        assert_same(got[0], ref[0], "output")
        assert_same(got[1], ref[1], "grad")
    except Mismatch as e:
        return str(e)
    return None


def _torch_backend_verdict(fn, tensors, process, expected) -> str | None:
    try:
        got = _grad_run(fn, tensors, process, backend="aot_eager")
    except Exception as e:  # noqa: BLE001
        return f"torch.compile(backend='aot_eager') fails too: {_short(e)}"
    if diff := _compare(got, expected):
        return f"torch.compile(backend='aot_eager') differs from eager too: {diff}"
    return None


def run_grad_sample(op, sample) -> tuple[str, str]:
    fn, tensors = _make_fn(op, sample)
    if not _leaves(tensors):
        return "skip", "no input requires grad"
    process = sample.output_process_fn_grad
    try:
        ref = _grad_run(fn, tensors, process)
    except _Timeout:
        raise
    except _NoGradient as e:
        return "skip", str(e)
    except Exception as e:  # noqa: BLE001
        return "skip", f"eager raises: {_short(e)}"
    try:
        again = _grad_run(fn, tensors, process, seed=1)
    except Exception as e:  # noqa: BLE001
        return "skip", f"eager raises on a second run: {_short(e)}"
    if _compare(again, ref):
        return "untestable", "nondeterministic: two eager runs differ"

    counters.clear()
    start = report.mark()
    try:
        got = _grad_run(fn, tensors, process, backend=irc.backend)
    except _Timeout:
        raise
    except Exception as e:  # noqa: BLE001
        if verdict := _torch_backend_verdict(fn, tensors, process, ref):
            return "untestable", verdict
        return "error", _short(e)
    graphs = report.reports_since(start).graphs  # the forward and the backward graphs
    breaks = sorted(counters["graph_break"])
    if diff := _compare(got, ref):
        if verdict := _torch_backend_verdict(fn, tensors, process, ref):
            return "untestable", verdict
        status, why = _irc_findings(graphs, breaks)
        return "mismatch", f"{diff} [{'natively' if status == 'native' else why}]"
    return _irc_findings(graphs, breaks)


def run_grad_entry(op, max_samples: int = 3, budget_s: float = 10.0) -> Outcome:
    """Classify one entry's gradients from at most `max_samples` samples, starting no new sample after `budget_s`."""
    t0 = time.perf_counter()
    key = entry_key(op)
    if not differentiable(op):
        return Outcome("untestable", "not differentiable in float32 on the CPU (OpInfo)")
    if op.has_nondeterministic_output or key in RANDOM:
        return Outcome("untestable", "random or uninitialised output")
    torch.manual_seed(0)
    try:
        samples = list(islice(op.sample_inputs("cpu", torch.float32, requires_grad=True), max_samples))
    except Exception as e:  # noqa: BLE001
        return Outcome("untestable", f"sample generation fails: {_short(e)}")
    worst = judge_samples(op, samples, run_grad_sample, t0, budget_s)
    if not samples:
        worst.reason = "no float32 CPU samples"
    return worst
