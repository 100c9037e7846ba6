"""PT2E's quantize / dequantize (torch.ops.quantized_decomposed, per tensor and per channel) -> tn.quantize /
tn.dequantize. torch defines these ops in torch.ao.quantization.fx._decomposed (imported here: torchao's PT2E uses
the same ones), so irc needs no torchao to take them. A Python float scale stays a double (an f64 constant), as
eager reads it; a Python int zero point an i64 one. torch's weight-only int8 product (aten._weight_int8pack_mm) ->
tn.weight_int8_mm, its int4 CPU product (aten._weight_int4pack_mm_for_cpu) -> tn.weight_int4_mm."""

import torch
import torch.ao.quantization.fx._decomposed  # registers torch.ops.quantized_decomposed
from xdsl.dialects.builtin import TensorType

from irc.dialects import tensor as tn
from irc.ir.types import element_type

from ..aten_table import Unsupported, imports, verified

qd = torch.ops.quantized_decomposed

# the dtypes eager's functions accept (their _DTYPE_TO_QVALUE_BOUNDS, less the float8 ones irc has no type for)
_INTS = (torch.uint8, torch.int8, torch.int16, torch.int32)


def _param(b, v, dtype: torch.dtype):
    """A scale or zero point: a tensor operand as it is, a Python number as a 0-d constant."""
    return v if hasattr(v, "type") else b.constant(v, dtype)


def _check(b, x, lo: int, hi: int, dtype: torch.dtype):
    if dtype not in _INTS:
        raise Unsupported(f"quantized dtype {dtype}")
    info = torch.iinfo(dtype)
    if not info.min <= lo <= hi <= info.max:
        raise Unsupported(f"range [{lo}, {hi}] outside {dtype}")  # eager raises: its error comes from the fallback


def _one_element(v):
    if hasattr(v, "type") and v.type.get_shape() not in ((), (1,)):
        raise Unsupported("a per-tensor parameter of more than one element")


@imports(qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor)
def import_quantize_per_tensor(b, node, x, scale, zero_point, quant_min, quant_max, dtype):
    _check(b, x, quant_min, quant_max, dtype)
    if b.dtype(x) not in (torch.float32, torch.bfloat16, torch.float16):
        raise Unsupported(f"quantize of {b.dtype(x)}")
    for v in (scale, zero_point):
        _one_element(v)
    s, z = _param(b, scale, torch.float64), _param(b, zero_point, torch.int64)
    s, z = (b.reshape(v, ()) for v in (s, z))
    op = tn.QuantizeOp(b.convert(x, torch.float32), s, z, quant_min, quant_max, None, element_type(dtype))
    return b.add(verified(op))


@imports(qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor)
def import_dequantize_per_tensor(b, node, q, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype=None):
    _check(b, q, quant_min, quant_max, dtype)
    if b.dtype(q) != dtype or out_dtype not in (None, torch.float32):
        raise Unsupported(f"dequantize of {b.dtype(q)} as {dtype} to {out_dtype}")
    for v in (scale, zero_point):
        _one_element(v)
    s, z = _param(b, scale, torch.float64), _param(b, zero_point, torch.int64)
    s, z = (b.reshape(v, ()) for v in (s, z))
    op = tn.DequantizeOp(q, s, z, quant_min, quant_max, None, element_type(torch.float32))
    return b.add(verified(op))


@imports(qd.quantize_per_channel.default)
def import_quantize_per_channel(b, node, x, scales, zero_points, axis, quant_min, quant_max, dtype):
    _check(b, x, quant_min, quant_max, dtype)
    if b.dtype(x) not in (torch.float32, torch.bfloat16, torch.float16):
        raise Unsupported(f"quantize of {b.dtype(x)}")
    axis = axis % len(x.type.get_shape())
    op = tn.QuantizeOp(
        b.convert(x, torch.float32), scales, zero_points, quant_min, quant_max, axis, element_type(dtype)
    )
    return b.add(verified(op))


@imports(qd.dequantize_per_channel.default)
def import_dequantize_per_channel(
    b, node, q, scales, zero_points, axis, quant_min, quant_max, dtype, *, out_dtype=None
):
    _check(b, q, quant_min, quant_max, dtype)
    if b.dtype(q) != dtype or out_dtype not in (None, torch.float32):
        raise Unsupported(f"dequantize of {b.dtype(q)} as {dtype} to {out_dtype}")
    axis = axis % len(q.type.get_shape())
    op = tn.DequantizeOp(q, scales, zero_points, quant_min, quant_max, axis, element_type(torch.float32))
    return b.add(verified(op))


@imports(qd.choose_qparams.tensor)
def import_choose_qparams(b, node, x, quant_min, quant_max, eps, dtype):
    _check(b, x, quant_min, quant_max, dtype)
    if b.dtype(x) not in (torch.float32, torch.bfloat16, torch.float16):
        raise Unsupported(f"choose_qparams of {b.dtype(x)}")
    op = b.insert(verified(tn.ChooseQParamsOp(x, quant_min, quant_max, eps, str(dtype).removeprefix("torch."))))
    return list(op.results)


def _weight_only_product(b, name: str, x, w, w_dtype: torch.dtype, scales):
    """The (M, N) result type of a weight-only product of float `x` and a `w_dtype` weight whose scales are in x's
    dtype; Unsupported (an eager call) for any other mix."""
    if b.dtype(x) not in (torch.float32, torch.bfloat16, torch.float16) or b.dtype(w) != w_dtype:
        raise Unsupported(f"{name} of {b.dtype(x)} and {b.dtype(w)}")
    if b.dtype(scales) != b.dtype(x):
        raise Unsupported(f"{name} with {b.dtype(scales)} scales")
    return TensorType(x.type.get_element_type(), [x.type.get_shape()[0], w.type.get_shape()[0]])


@imports(torch.ops.aten._weight_int8pack_mm.default)
def import_weight_int8pack_mm(b, node, x, w, scales):
    """torch's weight-only int8 product x @ w.T * scales (what inductor's freezing makes of torchao's weight-only
    linear layers, and a user may call)."""
    result = _weight_only_product(b, "_weight_int8pack_mm", x, w, torch.int8, scales)
    return b.add(verified(tn.WeightInt8MmOp(x, w, scales, result)))


@imports(torch.ops.aten._weight_int4pack_mm_for_cpu.default)
def import_weight_int4pack_mm(b, node, x, w, group_size, scale_and_zero):
    """torch's int4 CPU product (torchao's prototype Int4OpaqueTensor on CPU)."""
    result = _weight_only_product(b, "_weight_int4pack_mm_for_cpu", x, w, torch.uint8, scale_and_zero)
    return b.add(verified(tn.WeightInt4MmOp(x, w, scale_and_zero, group_size, result)))
