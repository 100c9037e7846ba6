"""segment_reduce and its backward written in ops irc imports.

Eager's kernel (SegmentReduce.cpp) starts each segment at `initial` (else the reduction's identity: 0, 1, -inf,
inf), folds in the segment's elements along `axis`, and divides a mean by the segment's length (an empty segment
keeps `initial`, or NaN for a mean without one). Here each element's segment is the count of segment ends at or
before it, and one scatter_reduce folds every element into its segment's slot (elements outside every segment into a
spare slot, dropped). The checks eager makes on the lengths raise its errors through irc::check_index.
"""

import torch

from .composites_indexing import check_index

aten = torch.ops.aten

IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -float("inf"), "min": float("inf")}
SCATTER = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "amax", "min": "amin"}
NEGATIVE = "lengths contains negative value!"
UNEQUAL = "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe."
KERNEL_NEGATIVE = (
    "Expected segment_length >= 0 to be true, but got false.  (Could this error message be improved?  "
    "If so, please report an enhancement request to PyTorch.)"
)
HUGE = 2**62  # a bound no length reaches: the check is only of the sign


def _segments(data, lengths, offsets, axis: int, unsafe: bool):
    """(index, lengths, s): each element's segment along `axis` (s, a spare slot, outside every segment), broadcast to
    data's shape, and the segments' lengths broadcast to the output's. Each check's result feeds the answer: an
    unused check (a pure op) would be dropped."""
    if lengths is not None:
        negative = KERNEL_NEGATIVE if unsafe else NEGATIVE
        lengths = check_index(lengths.to(torch.int64), HUGE, False, "RuntimeError", negative)
        ends = lengths.cumsum(-1)
        if not unsafe:  # every row sums to the axis' size: total - size in [0, 1), the last end rebuilt from it
            total = check_index(ends[..., -1:] - data.shape[axis], 1, False, "RuntimeError", UNEQUAL)
            ends = torch.cat([ends[..., :-1], total + data.shape[axis]], -1)
        first = torch.zeros_like(ends[..., :1])
    else:
        offsets = offsets.to(torch.int64)
        first = offsets[..., :1]
        lengths = check_index(offsets[..., 1:] - offsets[..., :-1], HUGE, False, "RuntimeError", KERNEL_NEGATIVE)
        ends = offsets[..., :-1] + lengths
    s = lengths.shape[-1]
    j = torch.arange(data.shape[axis], device=data.device)
    seg = (ends.unsqueeze(-1) <= j).sum(-2)  # (*batch, d): the segment of each position along axis
    seg = torch.where((seg < s) & (j >= first), seg, s)
    rest = [1] * (data.dim() - axis - 1)
    return seg.reshape(*seg.shape, *rest).expand(data.shape), lengths.reshape(*lengths.shape, *rest), s


def _supported(data, reduce, lengths, offsets) -> bool:
    return (
        data.is_floating_point()
        and reduce in IDENTITY
        and data.dim() > 0
        and (lengths is not None or offsets is not None)
    )


def _slots(data, axis: int, s: int, value):
    shape = list(data.shape)
    shape[axis] = s + 1
    return torch.full(shape, value, dtype=data.dtype, device=data.device)


def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    if indices is not None or not _supported(data, reduce, lengths, offsets):
        return NotImplemented
    axis = axis % data.dim()
    index, lengths, s = _segments(data, lengths, offsets, axis, unsafe)
    start = IDENTITY[reduce] if initial is None else float(initial)
    out = _slots(data, axis, s, start).scatter_reduce(axis, index, data, SCATTER[reduce], include_self=True)
    out = out.narrow(axis, 0, s)
    if reduce != "mean":
        return out
    count = lengths.to(data.dtype)
    empty = float("nan") if initial is None else float(initial)
    return torch.where(count > 0, out / count, torch.full((), empty, dtype=data.dtype, device=data.device))


def _segment_reduce_backward(grad, output, data, reduce, *, lengths=None, offsets=None, axis=0, initial=None):
    """Eager's backward kernel: sum and mean spread the segment's gradient; max and min give it to the elements equal
    to the result (or NaN), a positive one divided by their count when several; prod gives grad * out / x, or for a
    zero or NaN x grad times initial and the product of the others."""
    if not _supported(data, reduce, lengths, offsets):
        return NotImplemented
    axis = axis % data.dim()
    index, lengths, s = _segments(data, lengths, offsets, axis, True)
    zero = torch.zeros((), dtype=data.dtype, device=data.device)

    def per_element(t):  # a per-segment tensor read at each element's segment (0 outside every segment)
        return torch.cat([t, _slots(data, axis, 0, 0.0)], axis).gather(axis, index)

    def segment_sum(t):
        return _slots(data, axis, s, 0.0).scatter_add(axis, index, t.to(data.dtype)).narrow(axis, 0, s)

    g, out, inside = per_element(grad), per_element(output), index < s
    if reduce == "sum":
        r = g
    elif reduce == "mean":
        r = g / per_element(lengths.to(data.dtype).clamp(min=1).expand(grad.shape))
    elif reduce in ("max", "min"):
        hit = inside & (data.isnan() | (data == out))
        counter = per_element(segment_sum(hit))
        r = torch.where(hit, g, zero)
        r = torch.where((counter >= 2) & (r > 0), r / counter, r)
    else:
        nan, zeros = data.isnan(), data == 0
        bad = nan | zeros
        rest = _slots(data, axis, s, 1.0).scatter_reduce(axis, index, torch.where(bad, 1.0, data), "prod")
        rest = per_element(rest.narrow(axis, 0, s))
        other_nan = per_element(segment_sum(nan)) - nan.to(data.dtype)
        other_zero = per_element(segment_sum(zeros)) - zeros.to(data.dtype)
        factor = torch.where(other_nan > 0, float("nan"), torch.where(other_zero > 0, 0.0, 1.0))
        start = 1.0 if initial is None else float(initial)
        r = torch.where(bad, g * (start * rest * factor), g * out / data)
    return torch.where(inside, r, zero)


COMPOSITES = {
    aten.segment_reduce.default: _segment_reduce,
    aten._segment_reduce_backward.default: _segment_reduce_backward,
}
