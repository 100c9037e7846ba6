"""tensor-to-loop for 2-d pooling: one nest per pool, the window flattened into one reduction dim.

The space is (..., OH, KH * KW, OW): the window position r gives kh = r floordiv KW, kw = r mod KW,
and the input is read at (oh * s - p + kh * d, ow * s - p + kw * d); positions in the padding are
masked (-inf for max, 0 for sums). max_pool2d's indices come from argmax over r (the last NaN where the
window has any, as torch's kernel), turned back into h * W + w. Their backward ops scatter, so they stay externs.
"""

from xdsl.dialects import arith
from xdsl.dialects.builtin import i64
from xdsl.ir.affine import AffineExpr

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN, is_float

from .loop_builder import NestBuilder, Unsupported, in_range, shape
from .tensor_to_loop import lowers


def _window(op, k: list[int]):
    """A builder over (lead..., OH, KH*KW, OW, C) (C only channels-last: max and average pools), the window's kh
    and kw, and the dims oh, ow and r; lead is the number of dims before OH.

    The window runs between the output rows and columns, so the vector dim is a row's columns (one vector of
    outputs per window position), not the window (a gather of 9 and a horizontal max per output, which is slow);
    channels-last, it is the channels."""
    x, out = shape(op.input), shape(op.results[0])
    if DYN in x or DYN in out:
        raise Unsupported("pooling of a symbolic shape")
    lead = len(x) + (op.spatial() if isinstance(op, tn.MaxPool2dOp | tn.AvgPool2dOp) else -2)
    kinds = [loop.PARALLEL] * len(out)
    b = NestBuilder()
    b.set_space(
        [*out[: lead + 1], k[0] * k[1], *out[lead + 1 :]], kinds[: lead + 1] + [loop.REDUCTION] + kinds[lead + 1 :]
    )
    oh, r, ow = b.dim(lead), b.dim(lead + 1), b.dim(lead + 2)
    return b, lead, r // k[1], r % k[1], oh, ow, r


def _ints(attr) -> list[int]:
    return list(attr.get_values())


def _load_window(b: NestBuilder, op, lead: int, h: AffineExpr, w: AffineExpr, fill: float, k, s, p, d=(1, 1)):
    """The input at (h, w), or `fill` in the padding (no mask when every window lies inside the input)."""
    x, out = shape(op.input)[lead : lead + 2], shape(op.results[0])[lead : lead + 2]
    dims = b.dims()
    v = b.load(op.input, [*dims[:lead], h, w, *dims[lead + 3 :]])
    if not is_float(v.type):
        raise Unsupported("pooling of a non-float tensor")
    if not any(p) and all((o - 1) * st + (kk - 1) * dd < n for o, st, kk, dd, n in zip(out, s, k, d, x)):
        return v
    valid = b.all_of(
        [
            in_range(b, h, AffineExpr.constant(0), AffineExpr.constant(x[0])),
            in_range(b, w, AffineExpr.constant(0), AffineExpr.constant(x[1])),
        ]
    )
    return b.select(valid, v, b.like(fill, v))


@lowers(tn.MaxPool2dOp)
def lower_max_pool(op: tn.MaxPool2dOp):
    k, s, p, d = _ints(op.kernel), _ints(op.stride), _ints(op.padding), _ints(op.dilation)
    b, lead, kh, kw, oh, ow, r_dim = _window(op, k)
    h, w = oh * s[0] - p[0] + kh * d[0], ow * s[1] - p[1] + kw * d[1]
    v = _load_window(b, op, lead, h, w, float("-inf"), k, s, p, d)
    m = b.reduce("max", v)
    r = b.reduce("argmax", v)  # the first maximum, as torch's kernel (`val > maxval`)...
    # ...except that torch's takes every NaN it meets (`|| isnan(val)`): the last NaN of the window
    last_nan = b.reduce(
        "max", b.select(b.emit(arith.CmpfOp(v, v, "uno")), b.cast(b.index(r_dim), i64), b.const(-1, i64))
    )
    r = b.select(b.cmp("ge", last_nan, b.const(0, i64)), last_nan, r)
    row = b.emit(arith.FloorDivSIOp(r, b.const(k[1], i64)))
    col = b.emit(arith.RemSIOp(r, b.const(k[1], i64)))

    def coord(origin: AffineExpr, offset, dil: int):
        base = b.cast(b.index(origin), i64)
        return b.add(base, b.mul(offset, b.const(dil, i64)))

    hi = coord(oh * s[0] - p[0], row, d[0])
    wi = coord(ow * s[1] - p[1], col, d[1])
    flat = b.add(b.mul(hi, b.const(shape(op.input)[lead + 1], i64)), wi)
    return b.finish([m, flat], [r.type for r in op.results])


def _clamp_span(b: NestBuilder, start: AffineExpr, stop_expr, lo: int, hi: int):
    """(stop - start) over [start, stop) clamped to [lo, hi), as an index value."""
    start_v, stop_v = b.index(start), stop_expr
    start_v = b.emit(arith.MaxSIOp(start_v, b.index_const(lo)))
    stop_v = b.emit(arith.MinSIOp(stop_v, b.index_const(hi)))
    return b.emit(arith.SubiOp(stop_v, start_v))


@lowers(tn.AvgPool2dOp)
def lower_avg_pool(op: tn.AvgPool2dOp):
    k, s, p = _ints(op.kernel), _ints(op.stride), _ints(op.padding)
    x = shape(op.input)
    b, lead, kh, kw, oh, ow, _ = _window(op, k)
    v = _load_window(b, op, lead, oh * s[0] - p[0] + kh, ow * s[1] - p[1] + kw, 0.0, k, s, p)
    total = b.reduce("sum", v)
    if op.divisor is not None:
        return b.finish([b.div(total, b.like(op.divisor.value.data, total))], [op.result.type])
    spans = []
    for o, st, pad, kk, n in ((oh, s[0], p[0], k[0], x[lead]), (ow, s[1], p[1], k[1], x[lead + 1])):
        start = o * st - pad
        stop = b.emit(arith.MinSIOp(b.index(start + kk), b.index_const(n + pad)))
        if op.count_include_pad is not None:
            spans.append(b.emit(arith.SubiOp(stop, b.index(start))))
        else:
            spans.append(_clamp_span(b, start, stop, 0, n))
    count = b.cast(b.emit(arith.MuliOp(*spans)), total.type)
    return b.finish([b.div(total, count)], [op.result.type])


@lowers(tn.AdaptiveAvgPool2dOp)
def lower_adaptive_avg_pool(op: tn.AdaptiveAvgPool2dOp):
    x, out = shape(op.input), list(op.output_size.get_values())
    if DYN in x:
        raise Unsupported("pooling of a symbolic shape")
    windows = [max(-(-(i + 1) * n // o) - (i * n) // o for i in range(o)) for n, o in zip(x[-2:], out)]
    b, lead, kh, kw, oh, ow, _ = _window(op, windows)
    starts, stops = [], []
    for cell, n, o in zip((oh, ow), x[-2:], out):
        starts.append((cell * n) // o)
        stops.append((cell * n + (n + o - 1)) // o)
    h, w = starts[0] + kh, starts[1] + kw
    v = b.load(op.input, [*b.dims()[:lead], h, w])
    if not is_float(v.type):
        raise Unsupported("pooling of a non-float tensor")
    valid = b.all_of([in_range(b, h, None, stops[0]), in_range(b, w, None, stops[1])])
    total = b.reduce("sum", b.select(valid, v, b.like(0, v)))
    spans = [b.emit(arith.SubiOp(b.index(e), b.index(st))) for st, e in zip(starts, stops)]
    count = b.cast(b.emit(arith.MuliOp(*spans)), total.type)
    return b.finish([b.div(total, count)], [op.result.type])
