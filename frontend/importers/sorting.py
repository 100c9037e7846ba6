"""Sort, top-k, k-th value, median and mode (dialects/tensor/sorting.py). A 0-d input is its own answer at index 0;
a pick of one element keeps the dim, squeezed here for keepdim=False."""

import torch

from irc.dialects import tensor as tn

from ..aten_table import Unsupported, imports
from .reductions import rank

aten = torch.ops.aten


def _scalar(b, x):
    return x, b.constant(0, torch.int64)


def _static(v, what: str) -> int:
    if not isinstance(v, int):
        raise Unsupported(f"{what} {v} is symbolic")
    return v


@imports(aten.sort.default)
def import_sort(b, node, x, dim=-1, descending=False):
    return import_sort_stable(b, node, x, stable=False, dim=dim, descending=descending)


@imports(aten.sort.stable)
def import_sort_stable(b, node, x, *, stable=None, dim=-1, descending=False):
    if rank(x) == 0:
        return _scalar(b, x)
    op = b.insert(tn.SortOp(x, dim % rank(x), bool(descending), bool(stable)))
    return op.values, op.indices


@imports(aten.topk.default)
def import_topk(b, node, x, k, dim=-1, largest=True, sorted=True):
    k = _static(k, "topk's k")
    if rank(x) == 0:
        if k != 1:
            raise Unsupported("topk of a 0-d tensor with k != 1")
        return _scalar(b, x)
    op = b.insert(tn.TopkOp(x, k, dim % rank(x), bool(largest), bool(sorted)))
    return op.values, op.indices


def _pick(b, op, dim: int, keepdim: bool):
    op = b.insert(op)
    if keepdim:
        return op.values, op.indices
    return b.add(tn.SqueezeOp(op.values, [dim])), b.add(tn.SqueezeOp(op.indices, [dim]))


@imports(aten.kthvalue.default)
def import_kthvalue(b, node, x, k, dim=-1, keepdim=False):
    k = _static(k, "kthvalue's k")
    if rank(x) == 0:
        return _scalar(b, x)
    return _pick(b, tn.KthvalueOp(x, k, dim % rank(x)), dim % rank(x), keepdim)


@imports(aten.median.dim, aten.nanmedian.dim)
def import_median_dim(b, node, x, dim=-1, keepdim=False):
    if rank(x) == 0:
        return _scalar(b, x)
    ignore_nan = node.target._opname == "nanmedian"
    return _pick(b, tn.MedianOp(x, dim % rank(x), ignore_nan), dim % rank(x), keepdim)


@imports(aten.median.default, aten.nanmedian.default)
def import_median(b, node, x):
    """Over all elements: the median along dim 0 of the flattened input, as a 0-d value."""
    if rank(x) == 0:
        return x
    n = node.args[0].meta["val"].numel()
    flat = b.reshape(x, [_static(n, "median's element count")]) if rank(x) != 1 else x
    op = b.insert(tn.MedianOp(flat, 0, node.target._opname == "nanmedian"))
    return b.reshape(op.values, [])


@imports(aten.mode.default)
def import_mode(b, node, x, dim=-1, keepdim=False):
    if rank(x) == 0:
        return _scalar(b, x)
    return _pick(b, tn.ModeOp(x, dim % rank(x)), dim % rank(x), keepdim)
