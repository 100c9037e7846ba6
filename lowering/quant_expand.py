"""expand-quant: the tn.quantize / tn.dequantize that fuse-quant left become the elementwise tn ops of eager's own
decomposition (torch/ao/quantization/fx/_decomposed.py), in its order and its dtypes, so they fuse into generated
kernels that read and write the integer type itself. Per tensor:

    quantize:   convert(clamp(round(x * f32(1.0 / double(scale))) + f32(zero_point), min, max))
    dequantize: (f32(q) - f32(zero_point)) * f32(double(scale))

tn.choose_qparams (dynamic quantization's per-call parameters) and a quantize by them stay: tensor-to-loop builds
their nests directly (lower_quant.py).

Per channel, `x * reciprocal(scales)` and `(q - zero_points) * scales` in torch's promoted dtypes, the parameters
reshaped to broadcast along `axis`.
"""

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.ir.rules import apply_rules, rule
from irc.ir.types import DYN, element_type, torch_dtype

from .lower_quant import dynamic_scale
from .quant_layout import nhwc_region


class _Ops:
    """The ops of one expansion, in order (the rule's replacement ends with the one that replaces the op)."""

    def __init__(self):
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def convert(self, v: SSAValue, dtype: torch.dtype) -> SSAValue:
        el = element_type(dtype)
        return v if v.type.get_element_type() == el else self.add(tn.ConvertOp(v, el))

    def constant(self, value, dtype: torch.dtype) -> SSAValue:
        t = TensorType(element_type(dtype), [])
        value = float(value) if dtype.is_floating_point else int(value)
        return self.add(tn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])))

    def along(self, v: SSAValue, op) -> SSAValue:
        """A per-channel parameter shaped to broadcast along the op's axis ([C] -> [C, 1, ..., 1])."""
        trailing = len(op.input.type.get_shape()) - op.axis_value - 1
        shape = [*v.type.get_shape(), *[1] * trailing]
        return v if not trailing else self.add(tn.ReshapeOp(v, TensorType(v.type.get_element_type(), shape)))


def _dtype(v: SSAValue) -> torch.dtype:
    return torch_dtype(v.type.get_element_type())


def _per_channel_ok(op) -> bool:
    return op.axis is not None and DYN not in op.scale.type.get_shape()


@rule(tn.QuantizeOp)
def expand_quantize(op):
    b, x, lo, hi = _Ops(), op.input, *op.bounds
    if dynamic_scale(op):
        return None  # tensor-to-loop builds its nests (lower_quant.py)
    if op.axis is None:
        inv = b.convert(b.add(tn.ReciprocalOp(b.convert(op.scale, torch.float64))), torch.float32)
        compute, zp = torch.float32, op.zero_point
    elif _per_channel_ok(op):
        compute = torch.promote_types(_dtype(x), _dtype(op.scale))
        inv = b.convert(b.along(b.add(tn.ReciprocalOp(op.scale)), op), compute)
        zp = b.along(op.zero_point, op)
    else:
        return None
    y = b.add(tn.RoundOp(b.add(tn.MulOp(b.convert(x, compute), inv))))
    y = b.add(tn.AddOp(y, b.convert(zp, compute)))
    y = b.add(tn.MinimumOp(b.add(tn.MaximumOp(y, b.constant(lo, compute))), b.constant(hi, compute)))
    b.convert(y, _dtype(op.result))
    return b.ops


@rule(tn.DequantizeOp)
def expand_dequantize(op):
    b, q = _Ops(), op.input
    if op.axis is None:
        d = b.add(tn.SubOp(b.convert(q, torch.float32), b.convert(op.zero_point, torch.float32)))
        b.add(tn.MulOp(d, b.convert(b.convert(op.scale, torch.float64), torch.float32)))
        return b.ops
    if not _per_channel_ok(op):
        return None
    scale, d = b.along(op.scale, op), q
    if op.zero_point is not None:
        wide = torch.promote_types(_dtype(q), _dtype(op.zero_point))
        d = b.add(tn.SubOp(b.convert(q, wide), b.convert(b.along(op.zero_point, op), wide)))
    compute = torch.promote_types(_dtype(d), _dtype(scale))
    b.convert(b.add(tn.MulOp(b.convert(d, compute), b.convert(scale, compute))), _dtype(op.result))
    return b.ops


RULES = (expand_quantize, expand_dequantize)


@dataclass(frozen=True)
class ExpandQuantPass(ModulePass):
    """Each tn.quantize / tn.dequantize becomes eager's elementwise decomposition (per-channel ones of dynamic
    channel counts stay, run by their meaning); then a module of int8 convolutions computes NHWC (quant_layout.py)."""

    name = "expand-quant"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, RULES)
        nhwc_region(module)


__all__ = ["RULES", "ExpandQuantPass"]
