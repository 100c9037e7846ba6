"""A model's call broken down into its steps, each against its bound (bench/roofline.py measures it): the
records (`Part`: one library call, generated kernel or runtime step with its work and bound; `Roofline`: a
whole call with its totals, overhead and efficiency), and how they read: the summary table bench/compare.py's
report carries (`summary`), the per-model step table (`detail`), the machine line above them (`header`), and
the JSON rows (`as_json`). Nothing here times anything."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import torch

from .arithmetic import vector_rate
from .bounds import Bandwidth


@dataclass
class Part:
    """One step of a call: `kind` "library" (mem.extern), "kernel" (a launch) or "runtime" (alloc, derive)."""

    kind: str
    name: str
    seconds: float
    bound: float | None = None  # roofline seconds: best library time alone, or bytes / bandwidth
    flops: float = 0.0
    bytes: int = 0
    ops: float = 0.0  # kernel: vector instructions its body must issue (bench/arithmetic.py)
    limit: str = ""  # kernel: what its bound is: "memory" (bytes / bandwidth) or "arithmetic" (ops / vector rate)
    problem: str = ""  # library: the problem whose best rate was measured ("tn.mm 32x1024 @ 1024x1024 float32")
    best: str = ""  # library: the candidate that ran it fastest alone ("linear mkldnn_packed")

    @property
    def pct(self) -> float | None:  # % of its own bound reached
        return 100 * self.bound / self.seconds if self.bound and self.seconds > 0 else None


@dataclass
class Roofline:
    model: str
    measured: float  # median seconds of a compiled call
    iqr: tuple[float, float]
    parts: list[Part] = field(default_factory=list)
    programs: int = 0
    notes: list[str] = field(default_factory=list)

    def total(self, kind: str) -> float:
        return sum(p.seconds for p in self.parts if p.kind == kind)

    def bound(self, kind: str | None = None) -> float:
        return sum(p.bound or 0.0 for p in self.parts if kind is None or p.kind == kind)

    @property
    def overhead(self) -> float:  # everything the steps do not account for; runtime steps included
        return self.measured - self.total("library") - self.total("kernel")

    @property
    def efficiency(self) -> float:
        return self.bound() / self.measured if self.measured > 0 else 0.0


def _t(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1e6:.0f} us" if abs(s) < 1e-3 else f"{s * 1e3:.2f} ms"


def _of(r: Roofline, kind: str) -> str:
    t = r.total(kind)
    return f"{_t(t)} ({100 * r.bound(kind) / t:.0f}%)" if t > 0 else "-"


def summary(results: list[Roofline]) -> str:
    lines = [
        "| model | measured (IQR) | roofline | efficiency | library (% of bound) | kernels (% of bound) | overhead |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.measured <= 0:
            lines.append(f"| {r.model} | {'; '.join(r.notes)} | | | | | |")
            continue
        model = f"{r.model} ({'; '.join(r.notes)})" if r.notes else r.model
        lines.append(
            f"| {model} | {_t(r.measured)} ({_t(r.iqr[0])}-{_t(r.iqr[1])}) | {_t(r.bound())} | "
            f"{100 * r.efficiency:.0f}% | {_of(r, 'library')} | {_of(r, 'kernel')} | {_t(r.overhead)} "
            f"({100 * r.overhead / r.measured:.0f}%) |"
        )
    return "\n".join(lines) + "\n"


def _grouped(parts: list[Part]) -> list[tuple[str, int, float, float, Part]]:
    """(name, count, seconds, bound, first part) per distinct step name: a kernel launched twice, the same mm in
    every layer, one row each."""
    rows: dict[str, list] = {}
    for p in parts:
        row = rows.setdefault(p.name, [p.name, 0, 0.0, 0.0, p])
        row[1:4] = row[1] + 1, row[2] + p.seconds, row[3] + (p.bound or 0.0)
    return sorted((tuple(r) for r in rows.values()), key=lambda r: -r[2])


def detail(r: Roofline, top: int = 6) -> str:
    lines = [
        f"## {r.model}",
        "",
        (
            f"measured {_t(r.measured)} (IQR {_t(r.iqr[0])}-{_t(r.iqr[1])}), roofline {_t(r.bound())}, efficiency "
            f"{100 * r.efficiency:.0f}%; {r.programs} program(s): library {_of(r, 'library')}, "
            f"kernels {_of(r, 'kernel')}, overhead {_t(r.overhead)} (runtime steps {_t(r.total('runtime'))}, "
            "the rest outside the steps)"
        ),
        "",
    ]
    lines += [f"note: {n}\n" for n in r.notes]
    lines += ["| step | calls | measured | bound | % of bound | work per call |", "|---|---|---|---|---|---|"]
    for kind in ("library", "kernel"):
        for name, n, secs, bound, p in _grouped([p for p in r.parts if p.kind == kind])[:top]:
            rate = f", {p.flops / p.bound / 1e9:.0f} GFLOP/s best ({p.best})" if p.bound and p.best else ""
            work = f"{p.flops / 1e6:.1f} MFLOP{rate}" if p.flops else f"{p.bytes / 1e6:.2f} MB"
            if p.limit == "arithmetic":
                work += f", {p.ops / 1e6:.2f} M vector ops (bound by arithmetic)"
            lines.append(
                f"| {name} | {n} | {_t(secs)} | {_t(bound)} | {f'{100 * bound / secs:.0f}%' if secs > 0 else '-'} | {work} |"
            )
    return "\n".join(lines) + "\n"


def header(bandwidth: Bandwidth, amp: torch.dtype | None = None, int8: bool = False) -> str:
    from .hf_models import available

    hf = "" if available() else " HF BERT/GPT-2: not run (transformers is not installed)."
    load = os.getloadavg()[0]
    busy = (
        " The machine is loaded (more runnable threads than CPUs): a whole call is preempted more often than "
        "its short steps, so the overhead reads high; the IQR's low end is the quieter figure."
        if load > os.cpu_count()
        else ""
    )
    lowp = (
        f" Under {str(amp).removeprefix('torch.')} autocast: every product's best library time measured in "
        f"{str(amp).removeprefix('torch.')}."
        if amp is not None
        else " Int8 models: every mm, addmm and convolution's best time is oneDNN's int8 kernel for its shape."
        if int8
        else ""
    )
    return (
        f"torch {torch.__version__}, {torch.get_num_threads()} threads on {os.cpu_count()} CPUs, load average "
        f"{load:.1f}; {bandwidth}; {vector_rate() / 1e9:.2f} G vector ops/s per thread.{lowp}{hf}{busy}\n"
    )


def as_json(r: Roofline) -> dict:
    return dict(asdict(r), efficiency=r.efficiency, overhead=r.overhead, roofline=r.bound())
