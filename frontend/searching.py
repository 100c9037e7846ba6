"""Searching written in ops irc imports: searchsorted, bucketize and isin compile to one fused kernel instead of
running eagerly.

A search emulates eager's binary search step by step (ATen's Bucketization.cpp: `!(mid >= value)` goes right,
`!(mid > value)` for the right side), so the answer is eager's even where the sequence is not sorted or holds NaN.
Each of its log2(m) + 1 steps is elementwise in the values and reads the sequence at a clamped position, which
needs no bounds check (lowering/index_range.py): the whole search is one loop nest.

Sorts are tn ops that run torch's kernels (dialects/tensor/sorting.py), not decompositions: written in these ops (a
bitonic network over (value, index) keys, or each element's place as a count of the keys before it) they match
eager's stable sort but run slower than torch's sort at every size: a network step is a pass over memory, a count
is n^2 work.
"""

import torch

aten = torch.ops.aten

ISIN_LIMIT = 1024  # the most test elements isin compares each element with: past it the n x m work outgrows eager's


def _static(n) -> bool:
    return isinstance(n, int)


def _read(t, at):
    """t (1-d, or at's leading dims) at positions `at` along its last dim: a gather, never Python indexing (a 0-d
    index would become a data-dependent scalar)."""
    if t.dim() == 1:
        return t.index_select(0, at.reshape(-1)).reshape(at.shape)
    return t.gather(-1, at)


def _search(sequence, values, right: bool, sorter=None):
    """Eager's binary search of each value in the last dim of `sequence` (1-d, or values' leading dims)."""
    m = sequence.shape[-1]
    if not _static(m):
        return NotImplemented
    start = torch.zeros_like(values, dtype=torch.int64)
    if m == 0:
        return start
    end = torch.full_like(start, m)
    for _ in range(m.bit_length()):  # each step halves [start, end): log2(m) + 1 steps empty every interval
        active = start < end
        mid = torch.clamp(start + (end - start) // 2, 0, m - 1)  # provably in range: no bounds check
        middle = _read(sequence, mid if sorter is None else _read(sorter, mid))
        goes_right = ~(middle > values) if right else ~(middle >= values)
        start = torch.where(active & goes_right, mid + 1, start)
        end = torch.where(active & ~goes_right, mid, end)
    return start


def _searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    if sorted_sequence.dim() > 1 and sorted_sequence.shape[:-1] != self.shape[:-1]:
        return NotImplemented  # eager's error
    if sorter is not None and sorter.shape != sorted_sequence.shape:
        return NotImplemented
    out = _search(sorted_sequence, self, right or side == "right", sorter)
    return out if out is NotImplemented else out.to(torch.int32 if out_int32 else torch.int64)


def _searchsorted_scalar(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    if sorted_sequence.dim() != 1:
        return NotImplemented  # eager's error
    value = torch.scalar_tensor(self, dtype=sorted_sequence.dtype, device=sorted_sequence.device)
    return _searchsorted(sorted_sequence, value, out_int32=out_int32, right=right, side=side, sorter=sorter)


def _bucketize(self, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        return NotImplemented  # eager's error
    return _searchsorted(boundaries, self, out_int32=out_int32, right=right)


def _bucketize_scalar(self, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        return NotImplemented
    value = torch.scalar_tensor(self, dtype=boundaries.dtype, device=boundaries.device)
    return _searchsorted(boundaries, value, out_int32=out_int32, right=right)


def _isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Each element compared with every test element (one fused reduction), for up to ISIN_LIMIT test elements."""
    m = test_elements.numel()
    if not _static(m) or m > ISIN_LIMIT:
        return NotImplemented
    found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~found if invert else found


DECOMPOSITIONS = {
    aten.searchsorted.Tensor: _searchsorted,
    aten.searchsorted.Scalar: _searchsorted_scalar,
    aten.bucketize.Tensor: _bucketize,
    aten.bucketize.Scalar: _bucketize_scalar,
    aten.isin.Tensor_Tensor: _isin,
}
