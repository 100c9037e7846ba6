"""tensor-to-loop for dynamic quantization: tn.choose_qparams of a float32 tensor of static, nonzero size, and the
tn.quantize by its parameters, become the nests fusion would make of their decompositions, built directly (a
transformer's int8 graph has one of each per quantized activation, and as some forty tn ops they were most of its
loop stage's work). The parameters' arithmetic is determine_qparams' (torch/ao/quantization/utils.py, per tensor
affine), in float32 as eager computes it:

    lo, hi = min(amin(x), 0), max(amax(x), 0)
    scale  = max((hi - lo) / f32(quant_max - quant_min), f32(eps))
    zero   = clamp(quant_min - i32(round(lo / scale)), quant_min, quant_max)
    -> f64(scale), i64(zero)

One nest reduces the whole tensor to its minimum and maximum and computes both parameters after it. A large tensor
(simplify_tensor.split_rows) first reduces its rows in a nest of its own, which every thread shares, and the
parameters' nest then reduces the rows' results. Minimum and maximum do not depend on the order of the reduction,
so both forms give eager's bits. Other inputs (a size known only at run time, an empty tensor: eager's error) keep
the tn op, which runs torch's own function.

The quantize is eager's decomposition (torch/ao/quantization/fx/_decomposed.py, per tensor) in two nests: the 0-d
multiplier f32(1.0 / double(scale)) and zero point f32(zero_point), which fusion takes into the parameters' nest,
and the elementwise clamp(round(f32(x) * multiplier) + zero point, quant_min, quant_max) converted to the integer
type. A static quantization's (a constant scale) stays expand-quant's, for the NHWC regions it takes part in.
"""

import torch
from xdsl.dialects import math
from xdsl.dialects.builtin import TensorType, f32, f64, i32, i64

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN

from .loop_builder import NestBuilder, Unsupported, compute_type, element, shape
from .simplify_tensor import split_rows
from .tensor_to_loop import lowers

_F32 = TensorType(f32, [])  # the quantize's 0-d multiplier and zero point


@lowers(tn.ChooseQParamsOp)
def lower_choose_qparams(op: tn.ChooseQParamsOp):
    x, sizes = op.input, shape(op.input)
    if element(x) != f32 or DYN in sizes or 0 in sizes:
        raise Unsupported("choose_qparams of a dynamic, empty or non-float32 tensor")
    ops = []
    inner = split_rows(sizes)
    if inner is not None:  # the rows' minima and maxima first, on every thread
        rows = NestBuilder(sizes, [loop.PARALLEL] * inner + [loop.REDUCTION] * (len(sizes) - inner))
        v = rows.load(x, rows.dims())
        kept = TensorType(f32, [*sizes[:inner], *[1] * (len(sizes) - inner)])
        ops += rows.finish([rows.reduce("min", v), rows.reduce("max", v)], [kept, kept])
        low, high = ops[-1].results
        b = NestBuilder(kept.get_shape(), [loop.REDUCTION] * len(sizes))
        mn, mx = b.reduce("min", b.load(low, b.dims())), b.reduce("max", b.load(high, b.dims()))
    else:
        b = NestBuilder(sizes, [loop.REDUCTION] * len(sizes))
        v = b.load(x, b.dims())
        mn, mx = b.reduce("min", v), b.reduce("max", v)
    qmin, qmax = op.quant_min.value.data, op.quant_max.value.data
    zero = b.const(0.0, f32)
    mn, mx = b.min(mn, zero), b.max(mx, zero)
    scale = b.div(b.sub(mx, mn), b.const(float(qmax - qmin), f32))
    scale = b.max(scale, b.const(float(torch.tensor(op.eps.value.data, dtype=torch.float32)), f32))
    steps = b.cast(b.math(math.RoundEvenOp, b.div(mn, scale)), i32)
    zp = b.sub(b.const(qmin, i32), steps)
    zp = b.min(b.max(zp, b.const(qmin, i32)), b.const(qmax, i32))
    ops += b.finish([b.cast(scale, f64), b.cast(zp, i64)], [r.type for r in op.results])
    return ops, list(ops[-1].results)


def dynamic_scale(op: tn.QuantizeOp) -> bool:
    """A per-tensor quantize by parameters a tn.choose_qparams computes (through reshapes): dynamic quantization's."""
    v = op.scale
    while isinstance(v.owner, tn.ReshapeOp):
        v = v.owner.input
    return op.axis is None and isinstance(v.owner, tn.ChooseQParamsOp)


@lowers(tn.QuantizeOp)
def lower_per_tensor_quantize(op: tn.QuantizeOp):
    """A per-tensor quantize: the dynamic ones expand-quant leaves (dynamic_scale, checked there: here their producers
    are nests already), or any other that reaches tensor-to-loop unexpanded (irc-opt running the pass alone)."""
    if op.axis is not None:
        raise Unsupported("a per-channel quantize: expand-quant's")
    params = NestBuilder()
    inv = params.div(params.const(1.0, f64), params.cast(params.load(op.scale, []), f64))
    ops = params.finish([params.cast(inv, f32), params.cast(params.load(op.zero_point, []), f32)], [_F32, _F32])
    mul, zp = ops[-1].results
    b = NestBuilder()
    b.set_space(b.sizes(op.input))
    lo, hi = op.bounds
    y = b.math(math.RoundEvenOp, b.mul(b.cast(b.load(op.input, b.dims()), f32), b.load(mul, [])))
    y = b.min(b.max(b.add(y, b.load(zp, [])), b.const(float(lo), f32)), b.const(float(hi), f32))
    ops += b.finish([b.cast(y, compute_type(op.result.type.get_element_type()))], [op.result.type])
    return ops, list(ops[-1].results)


__all__ = ["dynamic_scale", "lower_choose_qparams", "lower_per_tensor_quantize"]
