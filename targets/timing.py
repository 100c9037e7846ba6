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
    """Arguments of the compiled sizes and strides: the real tensor where the spec has one (a frozen weight), else
    normal floats, zeros for integers (always in bounds). The other arguments a graph only reads are views of one
    buffer per dtype: timing needs their sizes, not distinct values. One the graph writes (written_from) gets its
    own. Copies of a model's weights would add their size to the compile's peak memory (BERT-base: 418 MB)."""
    g = torch.Generator().manual_seed(seed)
    tensors = [s for s in args if s.kind == "tensor" and (s.example is None or s.written_from is not None)]
    pools: dict[torch.dtype, torch.Tensor] = {}
    for dtype in {s.dtype for s in tensors if s.written_from is None}:
        size = max(_extent(s) for s in tensors if s.dtype == dtype and s.written_from is None)
        pools[dtype] = _filled(torch.empty(size, dtype=dtype), g)
    out = []
    for s in args:
        if s.kind != "tensor":
            out.append(s.value if s.kind == "index" else None)
        elif s.example is not None and s.written_from is None:
            out.append(s.example.detach())  # as an inference call sees it: no autograd
        elif s.written_from is None:
            out.append(pools[s.dtype].as_strided(s.sizes, s.strides))
        else:
            out.append(_filled(torch.empty_strided(s.sizes, s.strides, dtype=s.dtype), g))
    return out


def _extent(s: ArgSpec) -> int:
    """Elements from a tensor's first to its last, plus one: the storage its sizes and strides reach."""
    if 0 in s.sizes:
        return 0
    return 1 + sum((n - 1) * abs(st) for n, st in zip(s.sizes, s.strides))


def _filled(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    return t.normal_(generator=g) if t.dtype.is_floating_point else t.zero_()  # in place: no temporary


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
