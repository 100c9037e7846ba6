"""select-layout: NCHW or NHWC per convolution region, by a cost model; the choice and its reason go on the function.

A region is a connected set of ops that have an NHWC form (layout_rules.layout_operands: 2-d
convolutions, batch norm, elementwise ops on 4-d tensors) holding at least one convolution, joined
through their 4-d data operands. For each region and each layout the cost model adds up

    convolutions     seconds per convolution in that layout: `conv_timer(**problem)` -> (nchw_s, nhwc_s, same)
                     when the caller gives one (the CPU target measures torch's convolution once per shape
                     and caches it on disk), the estimate below leaves the choice close (the two layouts'
                     costs within CLOSE, 20%: measuring costs compile time) or the convolutions are big
                     (BIG_S: a wrong guess costs more than measuring), and every convolution of the region
                     gives the same numbers in both layouts (`same`; else a timing would choose the
                     numbers); else an estimate: the flop count, plus in NCHW a reorder of the input and
                     the output (the library computes in its own layout). Timed alone, oneDNN's NCHW
                     convolutions run slower than NHWC on larger batches and images and faster on small
                     images with many channels at batch 1, but whole models run faster in NHWC, as inductor
                     assumes on any CPU with oneDNN (figures: docs/loop-and-mem.md). In NHWC, a penalty for grouped and depthwise convolutions
    conversions      one per 4-d value crossing the region's boundary in a layout other than the region's
                     (an NHWC value that arrives as permute(v, TO_NCHW) or as a max or average pool of one, or leaves
                     through permute(., TO_NHWC), is free in NHWC and a conversion in NCHW), each costing a
                     read and a write of the tensor (an NHWC output that only pools read: of their results)

and `layout=auto` takes the cheaper (NCHW on a tie); `nchw` and `nhwc` force one. A region put in NHWC
has every op replaced by its NHWC form between permutes (layout_rules.to_nhwc); fold-permutes, run
next, cancels the pairs inside, so permutes remain only at the region's boundaries. The function gets
`irc.layout = ["region 0 (2 convs): nhwc: ...", ...]`, which the compile report shows.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irc.dialects import tensor as tn
from irc.dialects.tensor.base import element, shape
from irc.ir.types import DYN

from .layout_rules import TO_NHWC, arrives_nhwc, converted_nhwc, layout_operands, perm_of, to_nhwc

LAYOUTS = ("auto", "nchw", "nhwc")
COPY_BYTES_PER_S = 16e9  # a layout conversion (read + write), which the cpu emitter blocks in tiles: 40% of the
# rate measured on one, as a busy machine and tensors larger than its cache run slower
CONV_FLOPS_PER_S = 1e11  # the estimate when nothing is measured; only ratios matter
GROUPED_PENALTY = 1.5  # estimated NHWC slowdown of grouped / depthwise convolutions when nothing is measured
CLOSE = 1.2  # the timer measures a region when the estimated costs of its two layouts are within this ratio...
# ...or when its convolutions are estimated at BIG_S or more: the flop count cannot see a layout's speed, which
# differs by several times on some convolutions and not at all on others, and there a wrong guess costs more
# than measuring once per shape and machine (the timings are kept on disk)
BIG_S = 5e-3
ConvTimer = Callable[..., "tuple[float, float, bool] | None"]  # (nchw_s, nhwc_s, same numbers)


@dataclass
class Region:
    ops: list[Operation]  # program order
    convs: list[tn.ConvolutionOp] = field(default_factory=list)
    inputs: list[SSAValue] = field(default_factory=list)  # 4-d data operands from outside
    outputs: list[SSAValue] = field(default_factory=list)  # results read outside (or by a non-layout operand)


def regions(f: func.FuncOp) -> list[Region]:
    members = {op: layout_operands(op) for op in f.body.walk()}
    members = {op: vs for op, vs in members.items() if vs is not None}
    parent = {op: op for op in members}

    def find(op):
        while parent[op] is not op:
            parent[op] = parent[parent[op]]
            op = parent[op]
        return op

    for op, vs in members.items():
        for v in vs:
            if v.owner in members:
                parent[find(v.owner)] = find(op)
    groups: dict[Operation, Region] = {}
    for op in members:  # dict order is program order
        groups.setdefault(find(op), Region([])).ops.append(op)
    out = []
    for r in groups.values():
        inside = set(r.ops)
        r.convs = [op for op in r.ops if isinstance(op, tn.ConvolutionOp)]
        if not r.convs:
            continue
        for op in r.ops:
            r.inputs += [v for v in members[op] if v.owner not in inside and v not in r.inputs]
            for res in op.results:
                if any(
                    u.operation not in inside or u.index not in _layout_indices(u.operation, members) for u in res.uses
                ):
                    r.outputs.append(res)
        out.append(r)
    return out


def _layout_indices(op: Operation, members) -> set[int]:
    vs = members.get(op) or []
    return {i for i, v in enumerate(op.operands) if v in vs}


def _bytes(v: SSAValue) -> int:
    width = getattr(element(v), "bitwidth", 32)
    return math.prod(1 if d == DYN else d for d in shape(v)) * max(1, width // 8)


def conversions(r: Region, layout: str) -> list[SSAValue]:
    """The boundary values that need a copy into (or out of) the region's layout."""
    nhwc_in = [arrives_nhwc(v) for v in r.inputs]
    leaves_nhwc = [bool(list(v.uses)) and all(perm_of(u.operation) == TO_NHWC for u in v.uses) for v in r.outputs]
    want = layout == "nhwc"
    outs = [v for v, n in zip(r.outputs, leaves_nhwc) if n != want]
    if want:
        outs = [c for v in outs for c in converted_nhwc(v)]
    return [v for v, n in zip(r.inputs, nhwc_in) if n != want] + outs


def conv_problem(op: tn.ConvolutionOp) -> dict:
    return dict(
        x=list(shape(op.input)),
        w=list(shape(op.weight)),
        stride=list(op.stride.get_values()),
        padding=list(op.padding.get_values()),
        dilation=list(op.dilation.get_values()),
        groups=op.groups.value.data,
        dtype=str(element(op.input)),
        bias=op.bias is not None,
    )


def estimate(op: tn.ConvolutionOp) -> tuple[float, float]:
    """(nchw_s, nhwc_s) from the flop count, and in NCHW the reorder of the activations into the library's own
    layout and back (oneDNN computes in blocked or channels-last forms); grouped and depthwise convolutions pay
    GROUPED_PENALTY in NHWC."""
    out = [1 if d == DYN else d for d in shape(op.result)]
    w = [1 if d == DYN else d for d in shape(op.weight)]
    s = 2 * math.prod(out) * math.prod(w[1:]) / CONV_FLOPS_PER_S
    reorder = 2 * (_bytes(op.input) + _bytes(op.result)) / COPY_BYTES_PER_S
    return s + reorder, s * (GROUPED_PENALTY if op.groups.value.data > 1 else 1.0)


@dataclass(frozen=True)
class Choice:
    layout: str
    reason: str


def choose(r: Region, layout: str, timer: ConvTimer | None) -> Choice:
    conv_nchw, conv_nhwc = conversions(r, "nchw"), conversions(r, "nhwc")
    copy = [sum(2 * _bytes(v) for v in c) / COPY_BYTES_PER_S for c in (conv_nchw, conv_nhwc)]
    estimates = [estimate(op) for op in r.convs]
    conv = [sum(t[0] for t in estimates), sum(t[1] for t in estimates)]
    model = [conv[0] + copy[0], conv[1] + copy[1]]
    close = max(model) <= CLOSE * min(model) or min(conv) >= BIG_S
    measured = timer is not None and layout == "auto" and close  # a forced layout or a clear model measures nothing
    differ = False  # a convolution whose two layouts give different numbers: timing may not choose (noise would)
    if measured:
        times = [timer(**conv_problem(op)) if DYN not in shape(op.input) else None for op in r.convs]
        differ = any(t is not None and not t[2] for t in times)
        measured = all(t is not None for t in times) and not differ
        if not differ:  # a convolution too small to time keeps its estimate
            times = [t or e for t, e in zip(times, estimates)]
            conv = [sum(t[0] for t in times), sum(t[1] for t in times)]
    cost = [conv[0] + copy[0], conv[1] + copy[1]]
    grouped = sum(op.groups.value.data > 1 for op in r.convs)
    how = "measured" if measured else "estimated" + (f", {grouped} grouped with penalty" if grouped else "")
    if differ:
        how += "; its layouts round differently, so the estimate decides, not a timing"
    if not close and timer is not None and layout == "auto":
        how += f"; the model's costs are over {CLOSE:g}x apart and under {BIG_S * 1e3:g} ms, nothing measured"
    convs = f"convs {conv[1] * 1e3:.3g} ms nhwc vs {conv[0] * 1e3:.3g} ms nchw ({how})"
    copies = f"{len(conv_nhwc)} nhwc ({copy[1] * 1e3:.3g} ms) vs {len(conv_nchw)} nchw ({copy[0] * 1e3:.3g} ms)"
    why = f"{convs}; conversions {copies}"
    if layout != "auto":
        return Choice(layout, f"forced by layout={layout}; {why}")
    return Choice(
        "nhwc" if cost[1] < cost[0] else "nchw",
        f"cost {cost[1] * 1e3:.3g} ms nhwc vs {cost[0] * 1e3:.3g} ms nchw: {why}",
    )


def select_layout(f: func.FuncOp, layout: str = "auto", timer: ConvTimer | None = None) -> list[str]:
    """Choose and apply a layout per region of `f`; returns one note per region."""
    notes = []
    for i, r in enumerate(regions(f)):
        c = choose(r, layout, timer)
        notes.append(f"region {i} ({len(r.convs)} convs, {len(r.ops)} ops): {c.layout}: {c.reason}")
        if c.layout == "nhwc":
            for op in r.ops:
                new = to_nhwc(op)
                Rewriter.replace_op(op, new)
    return notes


@dataclass(frozen=True)
class SelectLayoutPass(ModulePass):
    """NCHW or NHWC per convolution region by a cost model (layout=auto|nchw|nhwc); permutes at region boundaries."""

    name = "select-layout"
    layout: str = "auto"
    conv_timer: ConvTimer | None = field(default=None, compare=False, repr=False)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"select-layout: unknown layout {self.layout!r}; valid layouts: {', '.join(LAYOUTS)}")
        for f in module.body.block.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                notes = select_layout(f, self.layout, self.conv_timer)
                if notes:
                    f.attributes["irc.layout"] = ArrayAttr([StringAttr(n) for n in notes])


def layout_notes(module: ModuleOp) -> list[str]:
    """The notes select-layout left on the module's functions (for the compile report)."""
    notes = []
    for f in module.walk():
        if isinstance(attr := f.attributes.get("irc.layout"), ArrayAttr):
            notes += [n.data for n in attr.data]
    return notes


__all__ = [
    "SelectLayoutPass",
    "LAYOUTS",
    "select_layout",
    "regions",
    "conversions",
    "choose",
    "layout_notes",
    "conv_problem",
]
