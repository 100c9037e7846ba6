"""Indexing: reads through integer index tensors and the functional scatters. A boolean mask is imported only where
its count of selected elements does not shape the result (index_put of one value per masked position)."""

import torch

from irc.dialects import tensor as tn
from irc.ir.types import tensor_type

from .. import composites_indexing  # noqa: F401  (defines irc::check_index)
from ..aten_table import Unsupported, imports
from ..symbols import concrete
from .shape import static_slice

aten = torch.ops.aten


def rank(v) -> int:
    return len(v.type.get_shape())


def norm_dim(x, dim: int) -> int:
    return dim % max(rank(x), 1)


def integer_indices(b, indices):
    if any(i is not None and b.dtype(i) in (torch.bool, torch.uint8) for i in indices):
        raise Unsupported("boolean mask as an index")
    dims = [d for d, i in enumerate(indices) if i is not None]
    if not dims:
        raise Unsupported("index without any index tensor")
    return [i for i in indices if i is not None], dims


@imports(aten.embedding.default)
def import_embedding(b, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if rank(weight) != 2:
        raise Unsupported("embedding table that is not 2-d")
    return b.add(tn.EmbeddingOp(weight, indices))


@imports(aten.embedding_dense_backward.default)
def import_embedding_backward(b, node, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    if not isinstance(padding_idx, int):
        raise Unsupported("embedding backward with a symbolic padding_idx")
    return b.add(tn.EmbeddingBackwardOp(grad, indices, num_weights, padding_idx, scale_grad_by_freq))


@imports(aten.index_select.default)
def import_index_select(b, node, x, dim, index):
    return b.add(tn.IndexSelectOp(x, index, norm_dim(x, dim)))


@imports(aten.gather.default)
def import_gather(b, node, x, dim, index, *, sparse_grad=False):
    if len(x.type.get_shape()) != len(index.type.get_shape()):  # torch's empty-index and 0-d special cases
        raise Unsupported("gather with an index of another rank than the input")
    return b.add(tn.GatherOp(x, index, norm_dim(x, dim)))


@imports(aten.index.Tensor)
def import_index(b, node, x, indices):
    values, dims = integer_indices(b, indices)
    return b.add(tn.IndexOp(x, values, dims, b.result_type(node)))


@imports(aten.index_put.default)
def import_index_put(b, node, x, indices, values, accumulate=False):
    if any(i is not None and b.dtype(i) == torch.bool for i in indices):
        return masked_put(b, node, x, indices, values, accumulate)
    idx, dims = integer_indices(b, indices)
    return b.add(tn.IndexPutOp(x, idx, b.tensor(values, b.dtype(x)), dims, accumulate))


def _same_size(a, b) -> bool:
    if concrete(a) is not None or concrete(b) is not None:
        return concrete(a) == concrete(b)
    return a.node.expr == b.node.expr


def masked_put(b, node, x, indices, values, accumulate):
    """x[mask] = v with one boolean mask over dims d..d+k-1 is a select wherever v is the same at every masked
    position (v broadcasts along the data-dependent count): where(mask, v, x), or x + where(mask, v, 0) to accumulate."""
    x_shape = list(node.args[0].meta["val"].shape)
    d = next(n for n, i in enumerate(indices) if i is not None)
    mask_meta = node.args[1][d].meta["val"]
    k = mask_meta.dim()
    if any(i is not None for i in indices[d + 1 :]) or not all(
        _same_size(m, s) for m, s in zip(mask_meta.shape, x_shape[d : d + k])
    ):
        raise Unsupported("boolean mask index beside other indices, or not matching the indexed dims")
    rest = x_shape[d + k :]
    # values broadcast to (*x[:d], count, *rest); every dim beyond that and the count dim itself must be 1
    v_shape = list(node.args[2].meta["val"].shape)
    width = d + 1 + len(rest)
    extra, v_shape = (
        v_shape[:-width] if len(v_shape) > width else [],
        [1] * max(0, width - len(v_shape)) + v_shape[-width:],
    )
    if any(concrete(n) != 1 for n in [*extra, v_shape[d]]):
        raise Unsupported("index_put through a boolean mask with a value per masked position")
    dtype = b.dtype(x)
    mask = b.reshape(indices[d], [1] * d + list(mask_meta.shape) + [1] * len(rest))
    v = b.reshape(b.tensor(values, dtype), v_shape[:d] + [1] * k + v_shape[d + 1 :])
    if not accumulate:
        return b.add(tn.WhereOp(mask, v, x))
    return b.add(tn.AddOp(x, b.add(tn.WhereOp(mask, v, b.constant(0, dtype)))))


def _src(b, node, x, value):
    """scatter's `value` overloads: the scalar broadcast to the index's shape."""
    return b.expand(b.tensor(value, b.dtype(x)), node.args[2].meta["val"].shape)


@imports(aten.scatter.src)
def import_scatter(b, node, x, dim, index, src):
    return b.add(tn.ScatterOp(x, index, src, norm_dim(x, dim)))


@imports(aten.scatter.value)
def import_scatter_value(b, node, x, dim, index, value):
    dim = norm_dim(x, dim)
    return _one_hot(b, node, x, dim, index, value) or b.add(tn.ScatterOp(x, index, _src(b, node, x, value), dim))


def _one_hot(b, node, x, dim: int, index, value):
    """One value scattered at one position per row along `dim` (nll_loss's gradient: `zeros.scatter(1, target, -1)`)
    is a select, where(iota == index, value, x), which fuses into the elementwise ops around it (tn.scatter has no loop
    form); the index checked first, with eager's error. None where the index is not one position for every row."""
    x_shape, i_shape = node.args[0].meta["val"].shape, node.args[2].meta["val"].shape
    size = concrete(x_shape[dim]) if dim < len(x_shape) else None
    if len(i_shape) != len(x_shape) or size is None or concrete(i_shape[dim]) != 1:
        return None
    if not all(_same_size(i, n) for d, (i, n) in enumerate(zip(i_shape, x_shape)) if d != dim):
        return None
    message = f"index {{index}} is out of bounds for dimension {dim} with size {{size}}"
    checked = b.add(tn.CheckIndexOp(index, size, False, "RuntimeError", message))
    iota = b.add(tn.IotaOp(tensor_type(torch.int64, [size])))
    iota = b.reshape(iota, [1] * dim + [size] + [1] * (len(x_shape) - dim - 1))
    hit = b.add(tn.EqOp(iota, b.convert(checked, torch.int64)))
    return b.add(tn.WhereOp(hit, b.tensor(value, b.dtype(x)), x))


_LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


@imports(aten.scatter.reduce, aten.scatter.value_reduce)
def import_scatter_legacy_reduce(b, node, x, dim, index, src, *, reduce):
    if reduce not in _LEGACY_REDUCE:
        raise Unsupported(f"scatter reduce={reduce!r}")
    if node.target == aten.scatter.value_reduce:
        src = _src(b, node, x, src)
    return b.add(tn.ScatterReduceOp(x, index, src, norm_dim(x, dim), _LEGACY_REDUCE[reduce], True))


@imports(aten.scatter_add.default)
def import_scatter_add(b, node, x, dim, index, src):
    return b.add(tn.ScatterReduceOp(x, index, src, norm_dim(x, dim), "sum", True))


@imports(aten.scatter_reduce.two)
def import_scatter_reduce(b, node, x, dim, index, src, reduce, *, include_self=True):
    if reduce not in tn.indexing.SCATTER_REDUCTIONS:
        raise Unsupported(f"scatter_reduce reduce={reduce!r}")
    return b.add(tn.ScatterReduceOp(x, index, src, norm_dim(x, dim), reduce, include_self))


def _static_size(node, dim: int, what: str) -> int:
    size = concrete(node.args[0].meta["val"].shape[dim])
    if size is None:
        raise Unsupported(f"{what} along a dynamic dim")
    return size


@imports(aten.select_scatter.default)
def import_select_scatter(b, node, x, src, dim, index):
    dim = norm_dim(x, dim)
    size = _static_size(node, dim, "select_scatter")
    if not isinstance(index, int):
        raise Unsupported("select_scatter at a symbolic index")
    return b.add(tn.SelectScatterOp(x, src, dim, index % size if size else index))


@imports(aten.slice_scatter.default)
def import_slice_scatter(b, node, x, src, dim=0, start=None, end=None, step=1):
    dim = norm_dim(x, dim)
    size = _static_size(node, dim, "slice_scatter")
    if not all(isinstance(v, int) or v is None for v in (start, end, step)):
        raise Unsupported("slice_scatter with symbolic bounds")
    start, end, step = static_slice(size, start, end, step)
    return b.add(tn.SliceScatterOp(x, src, dim, start, end, step))


@imports(torch.ops.irc.check_index.default)
def import_check_index(b, node, index, size, wrap, error, message):
    """A decomposition's bounds check (composites_indexing.check_index): the index behind tn.check_index."""
    return b.add(tn.CheckIndexOp(index, size, wrap, error, message))
