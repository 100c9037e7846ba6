"""Tensors made from sizes and scalars: full-likes are a 0-d constant expanded; arange is an iota."""

import torch

from irc.dialects import tensor as tn
from irc.ir.types import tensor_type

from ..aten_table import Unsupported, imports

aten = torch.ops.aten


def _check_device(device):
    if device is not None and torch.device(device).type != "cpu":
        raise Unsupported(f"tensor on device {device}")


def filled(b, node, value, device=None):
    _check_device(device)
    out = node.meta["val"]
    return b.expand(b.tensor(value, out.dtype), out.shape)


@imports(aten.full.default, aten.new_full.default)
def import_full(b, node, *args, dtype=None, layout=None, device=None, pin_memory=None):
    return filled(b, node, args[-1], device)


@imports(aten.full_like.default)
def import_full_like(b, node, x, value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return filled(b, node, value, device)


# _efficientzerotensor: the zero gradients of autograd formulas (sgn, sign, ...); run eagerly it gives a
# ZeroTensor without storage, which no compiled graph can hand back.
@imports(
    aten.zeros.default,
    aten.empty.memory_format,
    aten.empty_strided.default,
    aten.new_zeros.default,
    aten.new_empty.default,
    aten.new_empty_strided.default,
    aten.zeros_like.default,
    aten.empty_like.default,
    aten._efficientzerotensor.default,
)
def import_zeros(b, node, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return filled(b, node, 0, device)


@imports(aten.ones.default, aten.new_ones.default, aten.ones_like.default)
def import_ones(b, node, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return filled(b, node, 1, device)


@imports(aten.scalar_tensor.default)
def import_scalar_tensor(b, node, value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return filled(b, node, value, device)


@imports(aten.fill.Scalar, aten.fill.Tensor)
def import_fill(b, node, x, value):
    return filled(b, node, value)


@imports(aten.arange.start_step, aten.arange.default, aten.arange.start)
def import_arange(b, node, *args, dtype=None, layout=None, device=None, pin_memory=None):
    _check_device(device)
    start, end, step = {1: (0, args[0], 1), 2: (*args, 1), 3: args}[len(args)]
    out = node.meta["val"]
    i = b.add(tn.IotaOp(tensor_type(torch.int64, out.shape), b.dynamic_sizes(out.shape)))
    acc = torch.float64 if out.dtype.is_floating_point else torch.int64
    v = b.convert(i, acc)
    if step != 1:
        v = b.add(tn.MulOp(v, b.tensor(step, acc)))
    if not (isinstance(start, int) and start == 0):
        v = b.add(tn.AddOp(v, b.tensor(start, acc)))
    return b.convert(v, out.dtype)


@imports(aten.rand.default, aten.randn.default, aten.rand_like.default, aten.randn_like.default)
def import_random(
    b, node, *args, dtype=None, layout=None, device=None, pin_memory=None, generator=None, memory_format=None
):
    _check_device(device)
    if generator is not None:
        raise Unsupported("explicit generator")
    out = node.meta["val"]
    op_cls = (
        tn.RandOp
        if node.target._opname.startswith("rand") and not node.target._opname.startswith("randn")
        else tn.RandnOp
    )
    return b.add(op_cls(b.result_type(node), b.dynamic_sizes(out.shape)))
