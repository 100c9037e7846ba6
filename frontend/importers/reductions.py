"""Reductions and scans. tn reductions keep rank; keepdim=False becomes a tn.squeeze after them."""

import math

import torch

from irc.dialects import tensor as tn

from ..aten_table import Unsupported, imports

aten = torch.ops.aten


def rank(v) -> int:
    return len(v.type.get_shape())


def norm_dims(x, dims) -> list[int]:
    """aten's dim argument (None, [], an int or a list; negative allowed) as sorted non-negative dims."""
    r = rank(x)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(r))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % max(r, 1) for d in dims}) if r else []


def reduce(b, node, op_cls, x, dims, keepdim, dtype=None):
    x = b.convert(x, dtype or node.meta["val"].dtype) if dtype or op_cls in (tn.SumOp, tn.ProdOp, tn.MeanOp) else x
    dims = norm_dims(x, dims)
    r = b.add(op_cls(x, dims))
    if op_cls in (tn.AnyOp, tn.AllOp):  # tn gives i1; eager keeps uint8 for a uint8 operand
        r = b.convert(r, node.meta["val"].dtype)
    return r if keepdim or not dims else b.add(tn.SqueezeOp(r, dims))


def reduction(op_cls, *overloads):
    @imports(*overloads)
    def imp(b, node, x, dim=None, keepdim=False, *, dtype=None):
        if (
            op_cls in (tn.AnyOp, tn.AllOp) and isinstance(dim, (list, tuple)) and not dim
        ):  # any/all over no dims: each element
            return b.convert(b.convert(x, torch.bool), node.meta["val"].dtype)
        return reduce(b, node, op_cls, x, dim, keepdim, dtype)

    return imp


reduction(tn.SumOp, aten.sum.dim_IntList)
reduction(tn.MeanOp, aten.mean.dim)
reduction(tn.AmaxOp, aten.amax.default)
reduction(tn.AminOp, aten.amin.default)
reduction(tn.AnyOp, aten.any.dim, aten.any.dims)
reduction(tn.AllOp, aten.all.dim, aten.all.dims)
reduction(tn.ProdOp, aten.prod.dim_int)


@imports(aten.sum.default, aten.mean.default, aten.prod.default)
def import_full_reduction(b, node, x, *, dtype=None):
    op_cls = {"sum": tn.SumOp, "mean": tn.MeanOp, "prod": tn.ProdOp}[node.target._opname]
    return reduce(b, node, op_cls, x, None, False, dtype)


@imports(aten.any.default, aten.all.default, aten.max.default, aten.min.default)
def import_full_logical(b, node, x):
    op_cls = {"any": tn.AnyOp, "all": tn.AllOp, "max": tn.AmaxOp, "min": tn.AminOp}[node.target._opname]
    return reduce(b, node, op_cls, x, None, False)


def arg_reduce(b, node, op_cls, x, dim, keepdim):
    if rank(x) == 0:  # the only element is at index 0, whatever dim and keepdim say
        return b.constant(0, torch.int64)
    if (
        b.dtype(x) == torch.bool
    ):  # max.dim of a bool tensor (cumprod's backward): torch.argmax takes no bool; 0/1 order the same
        x = b.convert(x, torch.uint8)
    if dim is None:  # over all elements: flatten, reduce, reshape to [] or [1, ..., 1]
        shape = node.args[0].meta["val"].shape
        r = b.add(op_cls(b.reshape(x, [math.prod(shape)]), [0]))
        return b.reshape(r, [1] * len(shape) if keepdim else [])
    dims = norm_dims(x, dim)
    r = b.add(op_cls(x, dims))
    return r if keepdim or not dims else b.add(tn.SqueezeOp(r, dims))


@imports(aten.argmax.default, aten.argmin.default)
def import_arg_reduction(b, node, x, dim=None, keepdim=False):
    op_cls = tn.ArgmaxOp if node.target._opname == "argmax" else tn.ArgminOp
    return arg_reduce(b, node, op_cls, x, dim, keepdim)


@imports(aten.max.dim, aten.min.dim)
def import_max_dim(b, node, x, dim, keepdim=False):
    value_cls, index_cls = (tn.AmaxOp, tn.ArgmaxOp) if node.target._opname == "max" else (tn.AminOp, tn.ArgminOp)
    if rank(x) == 0:
        return x, b.constant(0, torch.int64)
    return reduce(b, node, value_cls, x, [dim], keepdim), arg_reduce(b, node, index_cls, x, dim, keepdim)


def _variance(b, x, dim, correction, keepdim, with_mean=False):
    """tn.var (and tn.mean over the same dims) of a real tensor; None correction means 1."""
    if b.dtype(x).is_complex:
        raise Unsupported("variance of a complex tensor")
    correction = 1 if correction is None else correction
    dims = norm_dims(x, dim)
    if not dims:
        raise Unsupported("variance of a 0-d tensor")
    outs = [b.add(tn.VarOp(x, dims, float(correction)))]
    if with_mean:
        outs.append(b.add(tn.MeanOp(x, dims)))
    outs = [r if keepdim else b.add(tn.SqueezeOp(r, dims)) for r in outs]
    return tuple(outs) if with_mean else outs[0]


@imports(aten.var.correction, aten.var.dim)
def import_var(b, node, x, dim=None, *args, correction=None, keepdim=False):
    if node.target == aten.var.dim:  # var.dim(x, dim, unbiased=True, keepdim=False)
        unbiased = args[0] if args else True
        keepdim = args[1] if len(args) > 1 else keepdim
        correction = 1 if unbiased else 0
    elif args:
        raise Unsupported("positional correction")
    return _variance(b, x, dim, correction, keepdim)


@imports(aten.var_mean.correction)
def import_var_mean(b, node, x, dim=None, *, correction=None, keepdim=False):
    return _variance(b, x, dim, correction, keepdim, with_mean=True)


@imports(aten.cumsum.default, aten.cumprod.default)
def import_scan(b, node, x, dim, *, dtype=None):
    op_cls = tn.CumsumOp if node.target._opname == "cumsum" else tn.CumprodOp
    x = b.convert(x, node.meta["val"].dtype)
    if rank(x) == 0:
        return x
    return b.add(op_cls(x, dim % rank(x)))


@imports(aten.logcumsumexp.default)
def import_logcumsumexp(b, node, x, dim):
    x = b.convert(x, node.meta["val"].dtype)
    if b.dtype(x).is_complex:
        raise Unsupported("logcumsumexp of a complex tensor")
    return x if rank(x) == 0 else b.add(tn.LogcumsumexpOp(x, dim % rank(x)))


@imports(aten.cummax.default, aten.cummin.default)
def import_cummax(b, node, x, dim):
    if rank(x) == 0:
        return x, b.constant(0, torch.int64)
    op_cls = tn.CummaxOp if node.target._opname == "cummax" else tn.CumminOp
    op = b.insert(op_cls(x, dim % rank(x)))
    return op.values, op.indices
