"""The meaning of tn's quantization ops: PT2E's quantized_decomposed functions (torch's own, in
torch/ao/quantization/fx/_decomposed.py, not torchao's) and oneDNN's int8 products.

A per-tensor scale is read as the double eager reads (`.item()`), so the f64 constant the importer keeps for a
Python float scale means the same as the float itself. tn.qconv / tn.qlinear mean oneDNN's call: `prepack(op, w)`
packs a weight once (the cpu target keeps it), `run(op, x, packed, ...)` is the product.
"""

import torch
import torch.ao.quantization.fx._decomposed  # registers torch.ops.quantized_decomposed

from irc.dialects import tensor as tn
from irc.ir.types import torch_dtype

qd = torch.ops.quantized_decomposed


def _int(attr) -> int:
    return attr.value.data


def result_dtype(op) -> torch.dtype:
    return torch_dtype(op.result.type.get_element_type())


def _quantize(op, x, scale, zp=None):
    lo, hi = op.bounds
    if op.axis is None:
        return qd.quantize_per_tensor.tensor(x, scale, zp, lo, hi, result_dtype(op))
    zp = torch.zeros(scale.shape, dtype=torch.int64) if zp is None else zp
    return qd.quantize_per_channel(x, scale, zp, op.axis_value, lo, hi, result_dtype(op))


def _dequantize(op, q, scale, zp=None):
    lo, hi = op.bounds
    out = result_dtype(op)
    if op.axis is None:
        return qd.dequantize_per_tensor.tensor(q, scale, zp, lo, hi, q.dtype, out_dtype=out)
    return qd.dequantize_per_channel(q, scale, zp, op.axis_value, lo, hi, q.dtype, out_dtype=out)


def _q(op) -> tuple[float, int, float, int, torch.dtype]:
    """(x_scale, x_zero_point, out_scale, out_zero_point, result dtype) of a tn.qconv / tn.qlinear."""
    return (
        op.x_scale.value.data,
        _int(op.x_zero_point),
        op.out_scale.value.data,
        _int(op.out_zero_point),
        result_dtype(op),
    )


def _conv_args(op):
    return list(op.stride.get_values()), list(op.padding.get_values()), list(op.dilation.get_values()), _int(op.groups)


def prepack(op, w: torch.Tensor, w_scale: torch.Tensor, x_shape=None) -> torch.Tensor:
    """oneDNN's packed form of an int8 weight for `op` (its activations' shape, when known, picks the blocking)."""
    if isinstance(op, tn.QConvOp):
        if x_shape is not None and op.channels_last is not None:
            x_shape = [x_shape[i] for i in (0, 3, 1, 2)]  # oneDNN takes the NCHW sizes
        xs, xz = _q(op)[:2]
        return torch.ops.onednn.qconv_prepack(w, w_scale, xs, xz, *_conv_args(op), x_shape)
    return torch.ops.onednn.qlinear_prepack(w, x_shape)


def _chain(op, x, w, w_scale, w_zp, bias):
    """What PT2E's graph computes: dequantize, the float product, the post-op, quantize (eager's own functions)."""
    if isinstance(op, tn.QConvOp) and op.channels_last is not None:
        return _chain_nchw(op, x.permute(0, 3, 1, 2), w, w_scale, w_zp, bias).permute(0, 2, 3, 1).contiguous()
    return _chain_nchw(op, x, w, w_scale, w_zp, bias)


def _chain_nchw(op, x, w, w_scale, w_zp, bias):
    xs, xz, os, oz, dt = _q(op)
    fx = qd.dequantize_per_tensor(x, xs, xz, *_bounds(x.dtype), x.dtype)
    fw = qd.dequantize_per_channel(w, w_scale, w_zp, 0, -128, 127, torch.int8)
    if isinstance(op, tn.QConvOp):
        stride, padding, dilation, groups = _conv_args(op)
        y = torch.nn.functional.conv2d(fx, fw, bias, stride, padding, dilation, groups)
    else:
        y = torch.nn.functional.linear(fx, fw, bias)
    y = torch.relu(y) if op.post_op.data == "relu" else y
    return y if dt == torch.float32 else qd.quantize_per_tensor(y, os, oz, *_bounds(dt), dt)


def _bounds(dtype: torch.dtype) -> tuple[int, int]:
    return torch.iinfo(dtype).min, torch.iinfo(dtype).max


def run(op, x, packed, w, w_scale, w_zp, bias=None, symmetric: bool | None = None) -> torch.Tensor:
    """The int8 product with a packed weight; an NCHW result in channels-last strides for tn.qconv (oneDNN's).
    oneDNN ignores weight zero points: a weight with any that is not 0 (`symmetric` False; None: look) takes the
    graph's own float chain."""
    if not (symmetric if symmetric is not None else not w_zp.any()):
        return _chain(op, x, w, w_scale, w_zp, bias)
    xs, xz, os, oz, dt = _q(op)
    post = op.post_op.data
    w_zp = w_zp.to(torch.int64)
    if isinstance(op, tn.QConvOp):
        last = op.channels_last is not None
        x = (x.permute(0, 3, 1, 2) if last else x).contiguous(memory_format=torch.channels_last)
        args = _conv_args(op)
        y = torch.ops.onednn.qconv_pointwise(x, xs, xz, packed, w_scale, w_zp, bias, *args, os, oz, dt, post, [], "")
        return y.permute(0, 2, 3, 1).contiguous() if last else y
    return torch.ops.onednn.qlinear_pointwise(
        x.contiguous(), xs, xz, packed, w_scale, w_zp, bias, os, oz, dt, post, [], ""
    )


def _product(op, x, w, w_scale, w_zp, bias=None):
    return run(op, x, prepack(op, w, w_scale), w, w_scale, w_zp, bias)


QUANT_SEMANTICS = {
    tn.QuantizeOp: _quantize,
    tn.DequantizeOp: _dequantize,
    tn.QConvOp: _product,
    tn.QLinearOp: _product,
}

__all__ = ["QUANT_SEMANTICS", "prepack", "run"]
