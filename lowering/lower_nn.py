"""tensor-to-loop for the nn ops: softmax and the norms as one multi-phase nest each, and the gathers.

softmax is max, exp-sum and divide over the same rows in one nest (two reduction phases and an
epilogue); layer norm is mean, centred variance (two-pass, numerically sound) and the affine
epilogue, with mean and rstd as extra reduced outputs. Gathers (embedding, index_select, gather,
index) load through data-dependent indices. Matmul, convolution, pooling backward ops, scatters
with data-dependent targets stay tn ops: externs.
"""

from xdsl.dialects import math
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.ir.affine import AffineExpr, AffineMap

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN, is_float

from .fusion.legality import copy_source
from .index_range import within
from .loop_builder import NestBuilder, Unsupported, shape
from .tensor_to_loop import count, lowers


def row_nest(x, dims) -> tuple[NestBuilder, object]:
    b = NestBuilder()
    b.set_space(b.sizes(x), [loop.REDUCTION if d in dims else loop.PARALLEL for d in range(len(shape(x)))])
    v = b.load(x, b.dims())
    if not is_float(v.type):
        raise Unsupported("normalisation of a non-float tensor")
    return b, v


@lowers(tn.SoftmaxOp, tn.LogSoftmaxOp)
def lower_softmax(op) -> list[Operation]:
    if not shape(op.input):
        b = NestBuilder()
        x = b.load(op.input, [])
        return b.finish([b.like(1 if isinstance(op, tn.SoftmaxOp) else 0, x)], [op.result.type])
    b, x = row_nest(op.input, {op.dim.value.data})
    m = b.reduce("max", x)
    shifted = b.sub(x, m)
    e = b.fexp(shifted)
    s = b.reduce("sum", e)
    # softmax multiplies by the row's reciprocal, as eager's vectorised kernel does: a vector division per element
    # was the costliest instruction of the pass (2048x1024: 64 vdivps per 1024-element row)
    r = b.mul(e, b.div(b.like(1, s), s)) if isinstance(op, tn.SoftmaxOp) else b.sub(shifted, b.math(math.LogOp, s))
    return b.finish([r], [op.result.type])


def _param(b: NestBuilder, v, dims: list[int]):
    """Load a parameter indexed by the nest dims `dims`, or None when absent."""
    return None if v is None else b.load(v, [b.dim(d) for d in dims])


def _affine(b: NestBuilder, y, w, bias):
    if w is not None:
        y = b.mul(y, w)
    if bias is not None:
        y = b.add(y, bias)
    return y


@lowers(tn.LayerNormOp)
def lower_layer_norm(op: tn.LayerNormOp) -> list[Operation]:
    rank, axis = len(shape(op.input)), op.axis.value.data
    norm = list(range(axis, rank))
    b, x = row_nest(op.input, set(norm))
    n = count(b, x)
    mean = b.div(b.reduce("sum", x), n)
    d = b.sub(x, mean)
    var = b.div(b.reduce("sum", b.mul(d, d)), n)
    rstd = b.math(math.RsqrtOp, b.add(var, b.like(op.eps.value.data, var)))
    y = _affine(b, b.mul(d, rstd), _param(b, op.weight, norm), _param(b, op.bias, norm))
    return b.finish([y, mean, rstd], [r.type for r in op.results])


@lowers(tn.BatchNormInferenceOp)
def lower_batch_norm_inference(op: tn.BatchNormInferenceOp) -> list[Operation]:
    b = NestBuilder()
    b.set_space(b.sizes(op.input))
    x = b.load(op.input, b.dims())
    mean, var = _param(b, op.running_mean, [1]), _param(b, op.running_var, [1])
    rstd = b.math(math.RsqrtOp, b.add(var, b.like(op.eps.value.data, var)))
    y = _affine(b, b.mul(b.sub(x, mean), rstd), _param(b, op.weight, [1]), _param(b, op.bias, [1]))
    return b.finish([y], [op.result.type])


@lowers(tn.BatchNormTrainingOp)
def lower_batch_norm_training(op: tn.BatchNormTrainingOp):
    """One nest over (N, C, ...) reducing all dims but 1; the [C] outputs leave it as [1, C, 1, ...] and a reshape.
    An input that is an NHWC region's output viewed as NCHW (permute(s, TO_NCHW)) is read as s, in a nest over
    (N, H, W, C) whose result is viewed back: the channels are then the innermost dim, a vector of them per step,
    where the NCHW nest read a channel's row across the whole of s (a train-mode BatchNorm under no_grad, as
    torch.optim.swa_utils.update_bn runs it)."""
    rank = len(shape(op.input))
    if shape(op.input)[1] < 0:
        raise Unsupported("batch norm with a dynamic channel count")
    nhwc = _channels_last_source(op.input)
    c = rank - 1 if nhwc is not None else 1
    b, x = row_nest(op.input if nhwc is None else nhwc, set(range(rank)) - {c})
    n = count(b, x)
    mean = b.div(b.reduce("sum", x), n)
    d = b.sub(x, mean)
    sq = b.reduce("sum", b.mul(d, d))
    var = b.div(sq, n)
    rstd = b.math(math.RsqrtOp, b.add(var, b.like(op.eps.value.data, var)))
    y = _affine(b, b.mul(d, rstd), _param(b, op.weight, [c]), _param(b, op.bias, [c]))
    m = b.like(op.momentum.value.data, x)
    keep = b.sub(b.like(1, x), m)
    rm, rv = _param(b, op.running_mean, [c]), _param(b, op.running_var, [c])
    unbiased = b.div(sq, b.max(b.sub(n, b.like(1, x)), b.like(1, x)))
    new_rm = b.add(b.mul(keep, rm), b.mul(m, mean))
    new_rv = b.add(b.mul(keep, rv), b.mul(m, unbiased))
    channel_shape = [1 if k != c else shape(op.input)[1] for k in range(rank)]
    stats = [op.save_mean, op.save_rstd, op.new_running_mean, op.new_running_var]
    y_type = op.result.type if nhwc is None else TensorType(op.result.type.get_element_type(), shape(nhwc))
    types = [y_type] + [TensorType(r.type.get_element_type(), channel_shape) for r in stats]
    ops = b.finish([y, mean, rstd, new_rm, new_rv], types)
    nest = ops[-1]
    reshapes = [tn.ReshapeOp(v, r.type) for v, r in zip(nest.results[1:], stats)]
    if nhwc is None:
        return [*ops, *reshapes], [nest.results[0], *(r.result for r in reshapes)]
    back = tn.PermuteOp(nest.results[0], [0, rank - 1, *range(1, rank - 1)])
    return [*ops, back, *reshapes], [back.result, *(r.result for r in reshapes)]


def _channels_last_source(x):
    """s where x is s (N, H, W, C) viewed as NCHW: the copy nest tensor-to-loop made of tn.permute(s, (0, 3, 1, 2));
    else None."""
    op = x.owner
    if isinstance(op, loop.NestOp) and len(shape(x)) == 4 and (load := copy_source(op)) is not None:
        d = [AffineExpr.dimension(i) for i in range(4)]
        if load.map.data == AffineMap(4, 0, (d[0], d[2], d[3], d[1])) and load.result.type == x.type.element_type:
            return load.source
    return None


# -- gathers ------------------------------------------------------------------------------------
# A load reads an unspecified value outside its source, so each index tensor is checked first (tn.check_index, placed
# before the nest: one pass over the indices, not one test per element loaded), raising eager's error.

OUT_OF_RANGE = "index out of range in self"  # embedding's IndexError, and index_select's but along dim 1
OUT_OF_DATA = (
    "INDICES element is out of DATA bounds, id={index} axis_dim={size}"  # index_select's along dim 1 (RuntimeError)
)


def out_of_bounds(dim: int) -> str:
    """The text of gather's RuntimeError and advanced indexing's IndexError (`dim`: gather's dim; for indexing, the
    position of the index tensor among them)."""
    return f"index {{index}} is out of bounds for dimension {dim} with size {{size}}"


def checked(b: NestBuilder, index, source, d: int, error: str, message: str, wrap: bool = False):
    """`index` behind a check against dim d of `source` (dim 0 of a 0-d source has size 1), or `index` itself where
    its producers prove it in range."""
    if not shape(source):
        bound = 1
    elif shape(source)[d] != DYN:
        bound = shape(source)[d]
    else:
        b.size(source, d)  # the tn.dim of that size, in `pre`
        bound = next(o.result for o in b.pre if isinstance(o, tn.DimOp) and o.input == source and o.dim.value.data == d)
    if isinstance(bound, int) and within(index, bound, wrap):
        return index
    check = tn.CheckIndexOp(index, bound, wrap, error, message)
    check.result.name_hint = "checked"
    b.pre.append(check)
    return check.result


@lowers(tn.EmbeddingOp)
def lower_embedding(op: tn.EmbeddingOp) -> list[Operation]:
    b = NestBuilder()
    k = len(shape(op.indices))
    b.set_space([*b.sizes(op.indices), b.size(op.weight, 1)])
    indices = checked(b, op.indices, op.weight, 0, "IndexError", OUT_OF_RANGE)
    i = b.load(indices, b.dims()[:k])
    extra = AffineExpr.dimension(b.rank)
    return b.finish([b.load(op.weight, [extra, b.dim(k)], [i])], [op.result.type])


@lowers(tn.IndexSelectOp)
def lower_index_select(op: tn.IndexSelectOp) -> list[Operation]:
    d = op.dim.value.data
    b = NestBuilder()
    if not shape(op.input):
        return b.finish([b.load(op.input, [])], [op.result.type])
    space = b.sizes(op.input)
    space[d] = b.size(op.index, 0) if shape(op.index) else AffineExpr.constant(1)
    b.set_space(space)
    error = (
        ("RuntimeError", OUT_OF_DATA) if d == 1 else ("IndexError", OUT_OF_RANGE)
    )  # eager's kernel for dim 1 is its own
    i = b.load(checked(b, op.index, op.input, d, *error), [b.dim(d)] if shape(op.index) else [])
    exprs = b.dims()
    exprs[d] = AffineExpr.dimension(b.rank)
    return b.finish([b.load(op.input, exprs, [i])], [op.result.type])


@lowers(tn.GatherOp)
def lower_gather(op: tn.GatherOp) -> list[Operation]:
    d = op.dim.value.data
    b = NestBuilder()
    b.set_space(b.sizes(op.index))
    index = checked(b, op.index, op.input, d, "RuntimeError", out_of_bounds(d))
    if not shape(op.index):
        i = b.load(index, [])
        return b.finish(
            [b.load(op.input, [AffineExpr.dimension(0)] if shape(op.input) else [], [i] if shape(op.input) else [])],
            [op.result.type],
        )
    i = b.load(index, b.dims())
    exprs = b.dims()
    exprs[d] = AffineExpr.dimension(b.rank)
    return b.finish([b.load(op.input, exprs, [i])], [op.result.type])


@lowers(tn.IndexOp)
def lower_index(op: tn.IndexOp) -> list[Operation]:
    """numpy advanced indexing: broadcast index tensors pick along `dims` (negative indices wrap)."""
    x, dims = op.input, list(op.dims.get_values())
    rank, out = len(shape(x)), shape(op.result)
    nb = len(out) - (rank - len(dims))
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    first = dims[0] if adjacent else 0
    b = NestBuilder()
    rest = [k for k in range(rank) if k not in dims]
    space: list = [None] * len(out)
    for j, n in enumerate(out):
        if n >= 0:
            space[j] = AffineExpr.constant(n)
    for pos, k in enumerate(rest):
        j = pos if (adjacent and k < first) else pos + nb
        space[j] = b.size(x, k)
    for j in range(first, first + nb):
        if space[j] is None:
            for v in op.indices:
                i = j - first - (nb - len(shape(v)))
                if i >= 0 and shape(v)[i] < 0:
                    space[j] = b.size(v, i)
                    break
            else:
                raise Unsupported("index: a `?` broadcast dim with no `?` index dim")
    b.set_space(space)
    bdims = b.dims()[first : first + nb]
    values = []
    for j, (v, k) in enumerate(zip(op.indices, dims)):
        off = nb - len(shape(v))
        v = checked(b, v, x, k, "IndexError", out_of_bounds(j), wrap=True)
        i = b.load(
            v,
            [
                AffineExpr.constant(0) if s == 1 and out[first + off + t] != 1 else bdims[off + t]
                for t, s in enumerate(shape(v))
            ],
        )
        n = b.cast(b.index(b.size(x, k)), i.type)
        values.append(b.select(b.cmp("lt", i, b.like(0, i)), b.add(i, n), i))
    exprs, extra, pos = [], 0, 0
    for k in range(rank):
        if k in dims:
            exprs.append(AffineExpr.dimension(b.rank + extra))
            extra += 1
        else:
            j = pos if (adjacent and k < first) else pos + nb
            exprs.append(b.dim(j))
            pos += 1
    return b.finish([b.load(x, exprs, values)], [op.result.type])


@lowers(tn.SelectScatterOp)
def lower_select_scatter(op: tn.SelectScatterOp) -> list[Operation]:
    d, index = op.dim.value.data, op.index.value.data
    b = NestBuilder()
    b.set_space(b.sizes(op.input))
    x = b.load(op.input, b.dims())
    s = b.load(op.src, [e for k, e in enumerate(b.dims()) if k != d])
    cond = b.cmp_index("eq", b.index(b.dim(d)), b.index_const(index))
    return b.finish([b.select(cond, s, x)], [op.result.type])


@lowers(tn.SliceScatterOp)
def lower_slice_scatter(op: tn.SliceScatterOp) -> list[Operation]:
    d, start, end, step = (a.value.data for a in (op.dim, op.start, op.end, op.step))
    b = NestBuilder()
    b.set_space(b.sizes(op.input))
    x = b.load(op.input, b.dims())
    rel = b.dim(d) - start if start else b.dim(d)
    exprs = b.dims()
    exprs[d] = rel // step if step != 1 else rel
    s = b.load(op.src, exprs)
    i = b.index(b.dim(d))
    conds = [b.cmp_index("sge", i, b.index_const(start)), b.cmp_index("slt", i, b.index_const(end))]
    if step != 1:
        conds.append(b.cmp_index("eq", b.index(rel % step), b.index_const(0)))
    return b.finish([b.select(b.all_of(conds), s, x)], [op.result.type])
