"""tensor-to-loop for the view family: every view is a nest whose one load carries the view as an index map.

A copy nest never survives next to a nest that reads it: fusion composes the maps, so views do
not copy. reshape splits into groups of dims with equal products (floordiv/mod only inside a
group); cat and pad select between loads under index conditions.
"""

from xdsl.ir import Operation
from xdsl.ir.affine import AffineConstantExpr, AffineExpr

from irc.dialects import tensor as tn
from irc.ir.types import DYN

from .loop_builder import NestBuilder, Unsupported, broadcast_exprs, in_range, shape
from .tensor_to_loop import lowers

BIG = 1 << 62


def result_space(b: NestBuilder, op: Operation) -> list[AffineExpr]:
    """The result's extents, `?` dims from the op's `sizes` operands in order."""
    sizes = iter(op.sizes)
    return [b.sym(next(sizes)) if n == DYN else AffineExpr.constant(n) for n in shape(op.result)]


def copy_nest(op: Operation, space, exprs_of) -> list[Operation]:
    """One nest over `space` (a function of the builder) loading op.input at exprs_of(builder)."""
    b = NestBuilder()
    b.set_space(space(b))
    return b.finish([b.load(op.input, exprs_of(b))], [op.result.type])


def reshape_groups(op: tn.ReshapeOp | None, src=None, dst=None) -> list[tuple[list[int], list[int]]]:
    """Pairs (source dims, result dims) with equal element counts, in order; size-1 dims stand alone."""
    if op is not None:
        src, dst = shape(op.input), shape(op.result)
    dyn_src = [k for k, n in enumerate(src) if n == DYN]
    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        if i < len(src) and src[i] == 1:
            groups.append(([i], []))
            i += 1
        elif j < len(dst) and dst[j] == 1:
            groups.append(([], [j]))
            j += 1
        elif i >= len(src) or j >= len(dst):
            raise Unsupported("reshape: element counts differ")
        elif DYN in (src[i], dst[j]):
            if src[i] != dst[j] or len(dyn_src) > 1 and (op is None or not _same_size(op, i, j)):
                raise Unsupported("dynamic reshape needs a semi-affine map")
            groups.append(([i], [j]))
            i, j = i + 1, j + 1
        else:
            gs, gd, ps, pd = [i], [j], src[i], dst[j]
            i, j = i + 1, j + 1
            while ps != pd:
                if ps < pd and i < len(src) and src[i] not in (DYN,):
                    ps, i = ps * src[i], i + 1
                    gs.append(i - 1)
                elif pd < ps and j < len(dst) and dst[j] != DYN:
                    pd, j = pd * dst[j], j + 1
                    gd.append(j - 1)
                else:
                    raise Unsupported("dynamic reshape needs a semi-affine map")
            groups.append((gs, gd))
    return groups


def _same_size(op: tn.ReshapeOp, i: int, j: int) -> bool:
    """Result dim j's size operand is `tn.dim` of the input's dim i."""
    k = sum(1 for n in shape(op.result)[:j] if n == DYN)
    size = op.sizes[k].owner
    return isinstance(size, tn.DimOp) and size.input == op.input and size.dim.value.data == i


def reshape_exprs(src, dst, groups) -> list[AffineExpr]:
    """The source index of result point (d0, d1, ...) under a row-major reshape."""
    out: list[AffineExpr] = [AffineExpr.constant(0)] * len(src)
    for gs, gd in groups:
        if not gs:
            continue
        if len(gs) == 1 and len(gd) == 1:
            out[gs[0]] = AffineExpr.dimension(gd[0])
            continue
        flat, stride = AffineExpr.constant(0), 1
        for k in reversed(gd):
            flat = AffineExpr.dimension(k) * stride + flat if stride != 1 else AffineExpr.dimension(k) + flat
            stride *= dst[k]
        stride = 1
        for pos, k in enumerate(reversed(gs)):
            e = flat if stride == 1 else flat // stride
            out[k] = e if pos == len(gs) - 1 else e % src[k]
            stride *= src[k]
    return out


def is_reshape_map(src, dst, m) -> bool:
    """Does the map (result dims -> source index) read the source in row-major order, as a reshape does?"""
    from .affine_simplify import simplify_map

    try:
        want = reshape_exprs(src, dst, reshape_groups(None, src, dst))
    except Unsupported:
        return False
    from xdsl.ir.affine import AffineMap

    extents = [None if n == DYN else n for n in dst]
    a = simplify_map(AffineMap(len(dst), m.num_symbols, tuple(m.results)), extents)
    b = simplify_map(AffineMap(len(dst), m.num_symbols, tuple(want)), extents)
    return a == b


@lowers(tn.ReshapeOp)
def lower_reshape(op: tn.ReshapeOp) -> list[Operation]:
    src, dst = shape(op.input), shape(op.result)
    groups = reshape_groups(op)
    return copy_nest(op, lambda b: result_space(b, op), lambda b: reshape_exprs(src, dst, groups))


@lowers(tn.ExpandOp)
def lower_expand(op: tn.ExpandOp) -> list[Operation]:
    return copy_nest(
        op, lambda b: result_space(b, op), lambda b: broadcast_exprs(shape(op.input), shape(op.result), b.dims())
    )


@lowers(tn.PermuteOp)
def lower_permute(op: tn.PermuteOp) -> list[Operation]:
    perm = list(op.perm.get_values())

    def exprs(b):
        out = [AffineExpr.constant(0)] * len(perm)
        for i, p in enumerate(perm):
            out[p] = b.dim(i)
        return out

    return copy_nest(op, lambda b: [b.size(op.input, p) for p in perm], exprs)


@lowers(tn.SqueezeOp)
def lower_squeeze(op: tn.SqueezeOp) -> list[Operation]:
    dims = set(op.dims.get_values())
    keep = [d for d in range(len(shape(op.input))) if d not in dims]

    def exprs(b):
        it = iter(b.dims())
        return [AffineExpr.constant(0) if d in dims else next(it) for d in range(len(shape(op.input)))]

    return copy_nest(op, lambda b: [b.size(op.input, d) for d in keep], exprs)


@lowers(tn.UnsqueezeOp)
def lower_unsqueeze(op: tn.UnsqueezeOp) -> list[Operation]:
    at = op.dim.value.data

    def space(b):
        s = b.sizes(op.input)
        return s[:at] + [AffineExpr.constant(1)] + s[at:]

    return copy_nest(op, space, lambda b: [e for k, e in enumerate(b.dims()) if k != at])


@lowers(tn.SliceOp)
def lower_slice(op: tn.SliceOp) -> list[Operation]:
    d, start, end, step = (a.value.data for a in (op.dim, op.start, op.end, op.step))

    def space(b):
        s = b.sizes(op.input)
        if shape(op.result)[d] == DYN:
            stop = s[d] if end >= BIG else AffineExpr.constant(end)
            s[d] = (stop - start + (step - 1)) // step if step != 1 else stop - start
        else:
            s[d] = AffineExpr.constant(shape(op.result)[d])
        return s

    def exprs(b):
        e = b.dims()
        e[d] = e[d] * step + start if step != 1 else e[d] + start
        return e

    return copy_nest(op, space, exprs)


@lowers(tn.SelectOp)
def lower_select(op: tn.SelectOp) -> list[Operation]:
    d, index = op.dim.value.data, op.index.value.data

    def space(b):
        s = b.sizes(op.input)
        return s[:d] + s[d + 1 :]

    return copy_nest(op, space, lambda b: b.dims()[:d] + [AffineExpr.constant(index)] + b.dims()[d:])


@lowers(tn.FlipOp)
def lower_flip(op: tn.FlipOp) -> list[Operation]:
    dims = set(op.dims.get_values())

    def exprs(b):
        return [b.size(op.input, k) - 1 - e if k in dims else e for k, e in enumerate(b.dims())]

    return copy_nest(op, lambda b: b.sizes(op.input), exprs)


@lowers(tn.AsStridedOp)
def lower_as_strided(op: tn.AsStridedOp) -> list[Operation]:
    src = shape(op.input)
    strides, offset = list(op.strides.get_values()), op.offset.value.data

    def exprs(b):
        flat = AffineExpr.constant(offset)
        for k, s in enumerate(strides):
            flat = flat + b.dim(k) * s
        out, inner = [], 1
        for k in reversed(range(len(src))):
            e = flat if inner == 1 else flat // inner
            out.append(e if k == 0 else e % src[k])
            inner *= src[k]
        return list(reversed(out))

    return copy_nest(op, lambda b: [AffineExpr.constant(n) for n in shape(op.result)], exprs)


@lowers(tn.PadOp)
def lower_pad(op: tn.PadOp) -> list[Operation]:
    low, high = list(op.low.get_values()), list(op.high.get_values())
    b = NestBuilder()
    sizes = b.sizes(op.input)
    b.set_space([n + lo + hi for n, lo, hi in zip(sizes, low, high)])
    exprs = [e - lo if lo else e for e, lo in zip(b.dims(), low)]
    x = b.load(op.input, exprs)
    conds = [
        in_range(b, e, AffineExpr.constant(0), n) for e, n, lo, hi in zip(exprs, sizes, low, high) if lo > 0 or hi > 0
    ]
    cond = b.all_of(conds)
    r = x if cond is None else b.select(cond, x, b.load(op.value, []))
    return b.finish([r], [op.result.type])


@lowers(tn.CatOp)
def lower_cat(op: tn.CatOp) -> list[Operation]:
    d = op.dim.value.data
    b = NestBuilder()
    pieces, offset = [], AffineExpr.constant(0)
    for x in op.inputs:
        n = b.size(x, d)
        if shape(x)[d] != 0:
            pieces.append((x, offset))
        offset = offset + n
    space = b.sizes(op.inputs[0])
    space[d] = offset
    b.set_space(space)
    value = None
    for x, off in reversed(pieces):
        exprs = b.dims()
        exprs[d] = exprs[d] if isinstance(off, AffineConstantExpr) and off.value == 0 else exprs[d] - off
        v = b.load(x, exprs)
        value = v if value is None else b.select(in_range(b, b.dim(d), None, _end(b, x, d, off)), v, value)
    if value is None:
        raise Unsupported("cat of empty tensors")
    return b.finish([value], [op.result.type])


def _end(b: NestBuilder, x, d: int, off: AffineExpr) -> AffineExpr:
    return off + b.size(x, d)
