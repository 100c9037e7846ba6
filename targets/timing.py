"""Timing whole calls: which of several builds of one graph is fastest (a target's `choose`)."""

import statistics
import time
from collections.abc import Callable

import torch

from .args import ArgSpec

MARGIN = 0.9  # another build replaces the incumbent only when its median is below this share of the incumbent's


def measure(candidates: dict[str, Callable[[], object]], *, reps: int = 7, budget_s: float = 0.5) -> dict[str, float]:
    """Median seconds per candidate; rounds run every candidate once in turn (fair under noise)."""
    for fn in candidates.values():  # warm-up: first-touch allocations, library primitives created
        fn()
    times: dict[str, list[float]] = {k: [] for k in candidates}
    deadline = time.perf_counter() + budget_s
    for r in range(reps):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        if r >= 2 and time.perf_counter() > deadline:
            break
    return {k: statistics.median(v) for k, v in times.items()}


def random_inputs(args: list[ArgSpec], seed: int = 0) -> list:
    """Arguments of the compiled sizes and strides: normal floats, zeros for integers (always in bounds)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for s in args:
        if s.kind == "tensor":
            t = torch.empty_strided(s.sizes, s.strides, dtype=s.dtype)
            if s.dtype.is_floating_point:
                t.copy_(torch.randn(s.sizes, generator=g).to(s.dtype))
            else:
                t.zero_()
            out.append(t)
        else:
            out.append(s.value if s.kind == "index" else None)
    return out


WHAT = {
    "loops": "generated loop nests",
    "extern": "the library's kernels",
    "default": "the default build kept",
    "tuned": "the tuned build",
}


def fastest(runs: dict, inputs: list, *, budget_s: float = 1.0) -> tuple[str, str]:
    """(label, note) of the fastest call among {label: run} on the same inputs, run in turn; the first label wins
    unless another beats it by MARGIN."""
    times = measure({label: (lambda run=run: run(inputs)) for label, run in runs.items()}, reps=15, budget_s=budget_s)
    first = next(iter(times))
    label = min(times, key=times.get)
    if times[label] >= MARGIN * times[first]:
        label = first
    us = ", ".join(f"{k} {t * 1e6:.1f}" for k, t in times.items())
    return label, f"{WHAT.get(label, label)} (median us per call: {us})"


__all__ = ["MARGIN", "fastest", "measure", "random_inputs"]
