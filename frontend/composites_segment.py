"""segment_reduce written in ops irc imports (its forward; the backward stays eager's kernel).

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
KERNEL_NEGATIVE = ("Expected segment_length >= 0 to be true, but got false.  (Could this error message be improved?  "
                   "If so, please report an enhancement request to PyTorch.)")
HUGE = 2**62  # a bound no length reaches: the check is only of the sign


def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    if indices is not None or not data.is_floating_point() or reduce not in IDENTITY or data.dim() == 0:
        return NotImplemented
    axis = axis % data.dim()
    # each check's result feeds the answer: an unused check (a pure op) would be dropped
    if lengths is not None:
        lengths = check_index(lengths.to(torch.int64), HUGE, False, "RuntimeError", KERNEL_NEGATIVE if unsafe else NEGATIVE)
        ends = lengths.cumsum(-1)
        if not unsafe:  # every row sums to the axis' size: total - size in [0, 1), the last end rebuilt from it
            total = check_index(ends[..., -1:] - data.shape[axis], 1, False, "RuntimeError", UNEQUAL)
            ends = torch.cat([ends[..., :-1], total + data.shape[axis]], -1)
        first = torch.zeros_like(ends[..., :1])
    elif offsets is not None:
        offsets = offsets.to(torch.int64)
        first = offsets[..., :1]
        lengths = check_index(offsets[..., 1:] - offsets[..., :-1], HUGE, False, "RuntimeError", KERNEL_NEGATIVE)
        ends = offsets[..., :-1] + lengths
    else:
        return NotImplemented
    s, d = lengths.shape[-1], data.shape[axis]
    j = torch.arange(d, device=data.device)
    seg = (ends.unsqueeze(-1) <= j).sum(-2)  # (*batch, d): the segment of each position along axis
    seg = torch.where((seg < s) & (j >= first), seg, s)
    rest = data.dim() - axis - 1
    index = seg.reshape(*seg.shape, *([1] * rest)).expand(data.shape)
    start = IDENTITY[reduce] if initial is None else float(initial)
    out_shape = list(data.shape)
    out_shape[axis] = s + 1
    out = torch.full(out_shape, start, dtype=data.dtype, device=data.device)
    out = out.scatter_reduce(axis, index, data, SCATTER[reduce], include_self=True).narrow(axis, 0, s)
    if reduce != "mean":
        return out
    count = lengths.reshape(*lengths.shape, *([1] * rest)).to(data.dtype)
    empty = float("nan") if initial is None else float(initial)
    return torch.where(count > 0, out / count, torch.full((), empty, dtype=data.dtype, device=data.device))


COMPOSITES = {
    aten.segment_reduce.default: _segment_reduce,
}
