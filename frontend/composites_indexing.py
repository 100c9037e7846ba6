"""Indexed reductions and scatters torch has no decomposition for (or only inductor's), written in ops irc imports:
index_reduce, masked_scatter (and its backward), put, take, histc, as_strided_scatter and nonzero_static compile
natively instead of running as eager calls.

Each gives eager's numbers: the reductions are scatter_reduce's (the same kernels' include_self, mean's count and
floor division for integers), the scatters place the same elements. An index is checked where eager checks it, with
eager's error: where eager's message is index_select's, the check is an index_select of an arange (lower_nn's check
before its load), whose values are the indices themselves; elsewhere (put, take) the `irc::check_index` op below,
imported as tn.check_index with that message.
"""

import math
import struct

import torch

aten = torch.ops.aten

PUT_OUT_OF_RANGE = "out of range: tried to access index {index} on a tensor of {size} elements."  # put's and take's


@torch.library.custom_op("irc::check_index", mutates_args=())
def check_index(index: torch.Tensor, size: int, wrap: bool, error: str, message: str) -> torch.Tensor:
    """`index` where every element lies in [0, size) ([-size, size) with wrap), else eager's error with `message`: a
    decomposition's bounds check with the message of the op it replaces (imported as tn.check_index)."""
    low = -size if wrap else 0
    bad = ((index < low) | (index >= size)).reshape(-1)
    if bad.any():
        raise {"IndexError": IndexError, "RuntimeError": RuntimeError}[error](
            message.format(index=index.reshape(-1)[bad.nonzero()[0, 0]].item(), size=size)
        )
    return index.clone()


@check_index.register_fake
def _(index, size, wrap, error, message):
    return torch.empty_like(index)


def _checked(index, size: int):
    """`index` (1-d) itself, behind index_select's bounds check: eager's IndexError "index out of range in self"."""
    return torch.arange(size, device=index.device).index_select(0, index.reshape(-1))


def _index_reduce(self, dim, index, source, reduce, *, include_self=True):
    """index_reduce as scatter_reduce with the 1-d index broadcast along source's other dims (no negative indices,
    as eager)."""
    if self.dim() == 0:
        return _index_reduce(self.reshape(1), 0, index, source.reshape(-1), reduce, include_self=include_self).reshape(
            ()
        )
    dim = dim % self.dim()
    shape = [1] * source.dim()
    shape[dim] = -1
    at = _checked(index, self.shape[dim]).view(shape).expand(source.shape)
    return self.scatter_reduce(dim, at, source, reduce, include_self=include_self)


def _wrapped(index, numel):
    """The flat positions of put and take: negative ones wrap, the rest checked with put's IndexError."""
    return check_index(index.reshape(-1), numel, True, "IndexError", PUT_OUT_OF_RANGE)


def _put(self, index, source, accumulate=False):
    """put as index_put on the flattened tensor."""
    flat = aten.index_put(self.reshape(-1), [_wrapped(index, self.numel())], source.reshape(-1), accumulate)
    return flat.reshape(self.shape)


def _take(self, index):
    """take (put's gradient for its source) as advanced indexing of the flattened tensor."""
    return aten.index(self.reshape(-1), [_wrapped(index, self.numel())]).reshape(index.shape)


def _masked_scatter(self, mask, source):
    """Each masked position takes source's element at the count of masked positions before it (eager's row-major
    order), when source holds at least one element per position: else eager's kernel, which raises where it is short."""
    self, mask = torch.broadcast_tensors(self, mask)
    if source.numel() < mask.numel():
        return NotImplemented
    m = mask.reshape(-1)
    at = torch.where(m, m.cumsum(0) - 1, 0)
    return torch.where(m, source.reshape(-1).index_select(0, at), self.reshape(-1)).reshape(self.shape)


def _masked_scatter_backward(grad, mask, sizes):
    """The gradient of masked_scatter's source: grad's masked elements in order, then zeros (each unmasked element
    goes to a spare last slot, dropped)."""
    n = 1
    for s in sizes:
        n = n * s
    grad, mask = torch.broadcast_tensors(grad, mask)
    g, m = grad.reshape(-1), mask.reshape(-1)
    at = torch.where(m, m.cumsum(0) - 1, n)
    return grad.new_zeros(n + 1).scatter(0, at, g)[:n].reshape(sizes)


def _rounded(v: float, dtype) -> float:
    """v as the nearest float32 (the edges' dtype)."""
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _histc(self, bins=100, min=0, max=0):
    """histc over an explicit finite range, as ATen's kernel bins it (HistogramKernel.cpp, linear interpolation
    without its local search): bin (x - lo) * bins / (hi - lo) truncated, in the input's dtype, with lo and hi the
    range's ends rounded to it; x == hi counts in the last bin, NaN and values outside in none. A range taken from
    the data (min == max) stays eager's kernel: it raises on non-finite data, naming the values, which no compiled
    check can say."""
    # float64 waits for the importer's constants to keep doubles (fx_import's constant() rounds a Python float to float32)
    if self.dtype != torch.float32 or bins <= 0:
        return NotImplemented
    lo, hi = (_rounded(float(v), self.dtype) for v in (min, max))
    if not lo < hi or math.isinf(lo) or math.isinf(hi):
        return NotImplemented  # eager's errors (or its range taken from the data)
    x = self.reshape(-1)
    lo_t, hi_t = (torch.scalar_tensor(v, dtype=self.dtype, device=self.device) for v in (lo, hi))
    inside = (x >= lo_t) & (x <= hi_t)
    pos = ((x - lo_t) * bins / (hi_t - lo_t)).to(torch.int64)
    pos = torch.where(inside, torch.clamp(pos, 0, bins - 1), bins)  # the top edge joins the last bin; the rest a spare
    return self.new_zeros(bins + 1).scatter_add(0, pos, torch.ones_like(x))[:bins]


def _as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A contiguous self with src written at the positions offset + sum(i_k * stride_k) of its elements: one scatter,
    when those positions are static, distinct and inside self (else eager's kernel and its errors)."""
    offset = storage_offset or 0
    if not all(isinstance(v, int) for v in (*size, *stride, offset, self.numel())) or not self.is_contiguous():
        return NotImplemented
    if any(n == 0 for n in size):
        return self.clone()
    dims = sorted((st, n) for st, n in zip(stride, size) if n > 1)
    extent = 0  # the largest position reachable by the dims so far: a stride past it gives distinct positions
    for st, n in dims:
        if st <= extent:
            return NotImplemented
        extent += st * (n - 1)
    if offset < 0 or offset + extent >= self.numel():
        return NotImplemented
    at = torch.full((), offset, dtype=torch.int64, device=self.device)
    for k, (n, st) in enumerate(zip(size, stride)):
        at = at.unsqueeze(-1) + torch.arange(n, device=self.device) * st
    flat = self.reshape(-1).scatter(0, at.reshape(-1), src.reshape(-1).to(self.dtype))
    return flat.reshape(self.shape)


def _nonzero_static(self, *, size, fill_value=-1):
    """The first `size` nonzero positions in row-major order, padded with fill_value: each nonzero element's flat
    position scattered to its count of nonzeros before it (the rest to a spare last slot, dropped), then unravelled."""
    dims = list(self.shape)
    if not dims or self.numel() == 0:  # no coordinates, or no nonzero: all padding
        return torch.full((size, len(dims)), fill_value, dtype=torch.int64, device=self.device)
    m = (self != 0).reshape(-1)
    pos = m.cumsum(0) - 1
    at = torch.where(m & (pos < size), pos, size)
    flat = torch.full((size + 1,), -1, dtype=torch.int64, device=self.device)
    flat = flat.scatter(0, at, torch.arange(m.shape[0], device=self.device))[:size]
    coords, rest = [], flat
    for n in reversed(dims):
        coords.append(rest % n)
        rest = rest // n
    out = torch.stack(coords[::-1], 1)
    return torch.where((flat >= 0).unsqueeze(1), out, fill_value)


COMPOSITES = {
    aten.index_reduce.default: _index_reduce,
    aten.put.default: _put,
    aten.take.default: _take,
    aten.masked_scatter.default: _masked_scatter,
    aten.masked_scatter_backward.default: _masked_scatter_backward,
    aten.histc.default: _histc,
    aten.as_strided_scatter.default: _as_strided_scatter,
    aten.nonzero_static.default: _nonzero_static,
}
