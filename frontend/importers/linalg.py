"""Matrix products. mm and bmm are one tn op each; addmm and baddbmm add the scaled bias: beta * input + alpha * (a @ b).

In bfloat16 and float16, eager's CPU kernels for addmm/baddbmm accumulate in float32 and add the bias
before the one rounding to the narrow type; so do these importers (a bf16 product rounded, then a rounded
add, differs from eager in one element in three and can flip a ReLU that follows). A linear layer's addmm (a
bias per column, unit scales) is one narrow tn.addmm, the library's own product in the graph's dtype (AMX or
AVX512-BF16 where the CPU has them); any other stays a float32 product of the narrow operands, rounded once.
"""

import torch

from irc.dialects import tensor as tn
from irc.ir.types import tensor_type

from ..aten_table import imports

aten = torch.ops.aten
NARROW = (torch.bfloat16, torch.float16)


def scaled_sum(b, node, product, bias, beta, alpha, dt=None):
    """beta * bias + alpha * product, skipping unit scales; beta == 0 ignores bias entirely (NaNs included), as torch does.
    `dt` is the dtype to compute in (default: the node's)."""
    val = node.meta["val"]
    dt = dt or val.dtype
    if alpha != 1:
        product = b.add(tn.MulOp(product, b.tensor(alpha, dt)))
    if beta == 0:
        return b.expand(product, val.shape)
    if beta != 1:
        bias = b.add(tn.MulOp(b.convert(bias, dt), b.tensor(beta, dt)))
    return b.add(tn.AddOp(b.convert(bias, dt), product, tensor_type(dt, val.shape)))


def product_plus_bias(b, node, op_cls, bias, x, y, beta, alpha):
    dt = node.meta["val"].dtype
    if dt not in NARROW:
        return scaled_sum(b, node, b.add(op_cls(x, y, b.result_type(node))), bias, beta, alpha)
    f32 = torch.float32  # bf16 x bf16 products are exact in f32; accumulate, add the bias, round once
    wide = b.add(op_cls(b.convert(x, f32), b.convert(y, f32), tensor_type(f32, node.meta["val"].shape)))
    return b.convert(scaled_sum(b, node, wide, bias, beta, alpha, f32), dt)


@imports(aten.mm.default)
def import_mm(b, node, x, y):
    return b.add(tn.MmOp(x, y, b.result_type(node)))


@imports(aten.bmm.default)
def import_bmm(b, node, x, y):
    return b.add(tn.BmmOp(x, y, b.result_type(node)))


@imports(aten.addmm.default)
def import_addmm(b, node, bias, x, y, *, beta=1, alpha=1):
    val = node.meta["val"]
    if val.dtype in NARROW and beta == 1 and alpha == 1 and _column_bias(node.args[0], val):
        return b.add(tn.AddmmOp(x, y, b.reshape(bias, (val.shape[1],)), b.result_type(node)))
    return product_plus_bias(b, node, tn.MmOp, bias, x, y, beta, alpha)


def _column_bias(bias, val) -> bool:
    """A bias of the result's dtype with one value per column: shape (N,) or (1, N)."""
    meta = bias.meta.get("val") if hasattr(bias, "meta") else None
    return (
        isinstance(meta, torch.Tensor)
        and meta.dtype == val.dtype
        and tuple(meta.shape) in ((val.shape[1],), (1, val.shape[1]))
    )


@imports(aten.baddbmm.default)
def import_baddbmm(b, node, bias, x, y, *, beta=1, alpha=1):
    return product_plus_bias(b, node, tn.BmmOp, bias, x, y, beta, alpha)
