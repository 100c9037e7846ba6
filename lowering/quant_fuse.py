"""fuse-quant: PT2E's int8 patterns become one oneDNN int8 product (tn.qconv, tn.qlinear), as inductor's
fx_passes/quantization.py does with freezing on:

    q(relu?(convolution(dq(x), dq_per_channel(w), bias)))   -> tn.qconv x, w ... out = (q's scale, zero point)
    convolution(dq(x), dq_per_channel(w), bias)             -> tn.qconv ... : -> f32 (the float-output form)
    q(relu?(addmm(bias, dq(x), permute(dq_per_channel(w))))) -> tn.qlinear (and mm, with or without an add of a
                                                                bias; the float form too)
    linear(dq(x) by run-time parameters, dq_per_channel(w))  -> tn.qlinear_dynamic (dynamic quantization)
    gelu(reshape?(a float-output tn.qlinear / qlinear_dynamic)) -> the product with gelu as oneDNN's post-op
    q(reshape?(dq(x))), the same parameters                  -> reshape?(x)  (exact for 8-bit integers)

Activations must be uint8 with constant per-tensor parameters (oneDNN's int8 kernels take no int8 activations),
weights int8 per output channel (axis 0); a quantized output must use its dtype's whole range (oneDNN saturates to
it). Anything else is left to expand-quant, which computes it as eager does.
"""

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import dce

from irc.dialects import tensor as tn
from irc.ir.rules import apply_rules, rule
from irc.ir.types import torch_dtype

from .weight_only import RULES as WEIGHT_ONLY

_U8 = torch.uint8
NHWC, NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def _const(v: SSAValue | None):
    """The value of a 0-d tn.constant, else None."""
    op = v.owner if v is not None else None
    if not isinstance(op, tn.ConstantOp) or v.type.get_shape() != ():
        return None
    return next(iter(op.value.iter_values()))


def _single_use(v: SSAValue) -> bool:
    return v.has_one_use()


def _dtype(v: SSAValue) -> torch.dtype:
    return torch_dtype(v.type.get_element_type())


def _full_range(op) -> bool:
    info = torch.iinfo(_dtype(op.result if isinstance(op, tn.QuantizeOp) else op.input))
    return op.bounds == (info.min, info.max)


def _per_tensor(op) -> tuple[float, int] | None:
    """(scale, zero point) of a per-tensor q/dq with constant parameters (0 < scale, 1/scale both finite), else None."""
    if op.axis is not None:
        return None
    s, z = _const(op.scale), _const(op.zero_point)
    if not isinstance(s, float) or not isinstance(z, int) or not 1e-30 < s < 1e30:
        return None
    return s, z


def _activation(v: SSAValue):
    """(uint8 x, scale, zero point) of a dequantized activation, else None."""
    dq = v.owner
    if not isinstance(dq, tn.DequantizeOp) or _dtype(dq.input) != _U8 or (q := _per_tensor(dq)) is None:
        return None
    return dq.input, *q


def _weight(v: SSAValue):
    """(int8 w, scales, zero points) of a per-output-channel dequantized weight, else None."""
    dq = v.owner
    if (
        not isinstance(dq, tn.DequantizeOp)
        or dq.axis_value != 0
        or _dtype(dq.input) != torch.int8
        or dq.zero_point is None
        or _dtype(dq.scale) != torch.float32
    ):
        return None
    return dq.input, dq.scale, dq.zero_point


def _conv_parts(conv):
    if not isinstance(conv, tn.ConvolutionOp) or conv.channels_last is not None or conv.transposed is not None:
        return None
    if len(conv.input.type.get_shape()) != 4 or (x := _activation(conv.input)) is None:
        return None
    if (w := _weight(conv.weight)) is None or (conv.bias is not None and _dtype(conv.bias) != torch.float32):
        return None
    return x, w


def _bias_add(add):
    """(the tn.mm, the bias) of add(bias, mm(...)) with a float32 bias per output column (either order), else None."""
    if not isinstance(add, tn.AddOp):
        return None
    for mm, bias in ((add.rhs, add.lhs), (add.lhs, add.rhs)):
        n = mm.type.get_shape()[-1:]
        if (
            isinstance(mm.owner, tn.MmOp)
            and _single_use(mm)
            and bias.type.get_shape() == n
            and _dtype(bias) == torch.float32
        ):
            return mm.owner, bias
    return None


def _dynamic_activation(v: SSAValue):
    """(uint8 x, scale, zero point) of an activation dequantized by parameters computed at run time (dynamic
    quantization's choose_qparams: tensors, not constants), else None."""
    dq = v.owner
    if not isinstance(dq, tn.DequantizeOp) or _dtype(dq.input) != _U8 or dq.axis is not None or _per_tensor(dq):
        return None
    if dq.zero_point is None or _dtype(dq.zero_point) != torch.int64 or not _full_range(dq):
        return None
    return dq.input, dq.scale, dq.zero_point


def _linear_parts(op, activation=None):
    """((x, scale, zero point), (w, scales, zero points), bias, the reshape between x's dequantize and the product or
    None) of a linear layer over dequantized operands: addmm, mm, or the importer's add(bias, mm); else None.
    `activation`: how the input's parameters are read (constants, or tensors computed at run time)."""
    activation = activation or _activation
    mm, bias = op, None
    if (found := _bias_add(op)) is not None:
        mm, bias = found
    elif isinstance(op, tn.AddmmOp) and op.epilogue is None:
        bias = op.bias
    elif not isinstance(op, tn.MmOp):
        return None
    t = mm.rhs.owner
    if not isinstance(t, tn.PermuteOp) or list(t.perm.get_values()) != [1, 0]:
        return None
    lhs = mm.lhs  # a layer over (batch, tokens, features) reads a reshape of the dequantized activation, which
    # other layers may read too (attention's query, key and value projections): each takes its own integer reshape
    lhs = lhs.owner.input if isinstance(lhs.owner, tn.ReshapeOp) else lhs
    if (x := activation(lhs)) is None or (w := _weight(t.input)) is None:
        return None
    if bias is not None and (bias.type.get_shape() != (w[0].type.get_shape()[0],) or _dtype(bias) != torch.float32):
        return None
    return x, w, bias, mm.lhs.owner if lhs is not mm.lhs else None


def _viewed(x: SSAValue, view) -> list:
    """[the reshape of the integer activation that the dequantized one had] (it commutes with a per-tensor dq)."""
    if view is None:
        return []
    return [tn.ReshapeOp(x, TensorType(x.type.get_element_type(), view.result.type.get_shape()), list(view.sizes))]


def _residual(add):
    """(the convolution, (uint8 accum, scale, zero point)) of add(conv(dq(x), dq(w)), dq(accum)), either order, with
    the convolution's result read only there (a residual connection: oneDNN's sum post-op), else None."""
    if not isinstance(add, tn.AddOp) or add.lhs.type.get_shape() != add.rhs.type.get_shape():
        return None
    for c, d in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        conv = c.owner if isinstance(c.owner, tn.ConvolutionOp) and _single_use(c) else None
        if conv is not None and _conv_parts(conv) is not None and (accum := _activation(d)) is not None:
            return conv, accum
    return None


def _product(prod, result_type, out_q: tuple[float, int], post_op: str):
    """The int8 op for a matched convolution or linear layer, or None."""
    accum, before = None, []
    if (residual := _residual(prod)) is not None:
        if result_type.get_element_type() == f32:
            return None  # a residual summed into a float32 result: left to the float-output convolution and the add
        prod, (a, a_s, a_z) = residual
        before = [tn.PermuteOp(a, NHWC)]
        accum = (before[0].result, a_s, a_z)
    if (parts := _conv_parts(prod)) is not None:
        (x, xs, xz), (w, ws, wz) = parts
        nhwc = tn.PermuteOp(x, NHWC)  # oneDNN computes channels-last: consecutive convolutions' permutes cancel
        n, o, h, w_ = result_type.get_shape()
        conv = tn.QConvOp(
            nhwc.result,
            w,
            ws,
            wz,
            prod.bias,
            TensorType(result_type.get_element_type(), [n, h, w_, o]),
            x_q=(xs, xz),
            out_q=out_q,
            post_op=post_op,
            stride=list(prod.stride.get_values()),
            padding=list(prod.padding.get_values()),
            dilation=list(prod.dilation.get_values()),
            groups=prod.groups.value.data,
            channels_last=True,
            accum=accum,
        )
        return [*before, nhwc, conv, tn.PermuteOp(conv.result, NCHW)]
    if (parts := _linear_parts(prod)) is not None:
        (x, xs, xz), (w, ws, wz), bias, view = parts
        pre = _viewed(x, view)
        x = pre[0].result if pre else x
        return [*pre, tn.QLinearOp(x, w, ws, wz, bias, result_type, x_q=(xs, xz), out_q=out_q, post_op=post_op)]
    if result_type.get_element_type() == f32 and (parts := _linear_parts(prod, _dynamic_activation)) is not None:
        (x, xs, xz), (w, ws, wz), bias, view = parts
        pre = _viewed(x, view)
        x = pre[0].result if pre else x
        return [*pre, tn.QLinearDynamicOp(x, xs, xz, w, ws, wz, bias, result_type, post_op)]
    return None


def _matches(op) -> bool:
    return _conv_parts(op) is not None or _linear_parts(op) is not None or _residual(op) is not None


PRODUCT_OPS = (tn.ConvolutionOp, tn.AddmmOp, tn.MmOp, tn.AddOp)


def _tail(q):
    """(the product, its post-op) a per-tensor quantize reads through an optional single-use relu, else None."""
    v, post = q.input, "none"
    if isinstance(v.owner, tn.ReluOp) and _single_use(v):
        v, post = v.owner.input, "relu"
    if not isinstance(v.owner, PRODUCT_OPS) or not _single_use(v):
        return None
    return v.owner, post


def _quantized_output(q):
    """(the product, its post-op, q's scale and zero point) for a quantize that can take its product whole, else None."""
    if _dtype(q.result) not in (_U8, torch.int8) or not _full_range(q):
        return None
    if (out := _per_tensor(q)) is None or (tail := _tail(q)) is None:
        return None
    return (*tail, out) if _matches(tail[0]) else None


@rule(tn.QuantizeOp)
def fuse_quantized_output(q):
    """q(relu?(product(dq(x), dq(w)))) -> one int8 product writing q's integer type."""
    if (found := _quantized_output(q)) is None:
        return None
    prod, post, out = found
    return _product(prod, q.result.type, out, post)


@rule(PRODUCT_OPS)
def fuse_float_output(prod):
    """product(dq(x), dq(w)) that no quantize takes -> one int8 product writing float32."""
    if prod.result.type.get_element_type() != f32:
        return None
    for use in prod.result.uses:  # a bias add, or a quantize (through a relu), after it takes the product whole
        user = use.operation
        if isinstance(user, tn.AddOp) and any(_linear_parts(user, a) for a in (_activation, _dynamic_activation)):
            return None
        if isinstance(user, tn.AddOp) and _residual(user) is not None and user.result.has_one_use():
            user = next(iter(user.result.uses)).operation  # the residual's quantize takes it, if any
        if isinstance(user, tn.ReluOp) and user.result.has_one_use():
            user = next(iter(user.result.uses)).operation
        if isinstance(user, tn.QuantizeOp) and _quantized_output(user) is not None:
            return None
    return _product(prod, TensorType(f32, prod.result.type.get_shape()), (1.0, 0), "none")


@rule(tn.QuantizeOp)
def fold_requantize(q):
    """q(reshape?(dq(x))) with the same parameters and an 8-bit type -> reshape?(x): (x - z) * s * (1/s) is within
    255 * 3 ulp of x - z, which rounds back to it; the range is the dtype's, so the clamp changes nothing."""
    v, view = q.input, None
    if isinstance(v.owner, tn.ReshapeOp):
        view, v = v.owner, v.owner.input
    dq = v.owner
    if not isinstance(dq, tn.DequantizeOp) or dq.input.type.get_element_type() != q.result.type.get_element_type():
        return None
    if _dtype(q.result) not in (_U8, torch.int8) or not _full_range(q) or (p := _per_tensor(q)) is None:
        return None
    if _per_tensor(dq) != p:
        return None
    if view is None:
        return dq.input
    return tn.ReshapeOp(dq.input, q.result.type, list(view.sizes))


GELU_POST_OPS = {"none": "gelu", "tanh": "gelu_tanh"}  # tn.gelu's approximate -> the int8 products' post_op


@rule(tn.GeluOp)
def fold_gelu_post_op(gelu):
    """gelu(reshape?(y)) for y a float-output int8 linear layer read only there -> the layer with gelu as its post-op,
    which oneDNN applies to each block of the result while it is in cache: one pass less over a transformer's
    widest activation, and eager's exact gelu (oneDNN's gelu_erf and gelu_tanh)."""
    v, view = gelu.input, None
    if isinstance(v.owner, tn.ReshapeOp) and _single_use(v):
        view, v = v.owner, v.owner.input
    prod = v.owner
    if not isinstance(prod, (tn.QLinearOp, tn.QLinearDynamicOp)) or not _single_use(v):
        return None
    if prod.post_op.data != "none" or prod.result.type.get_element_type() != f32:
        return None
    fused = prod.clone()
    fused.properties["post_op"] = StringAttr(GELU_POST_OPS[gelu.approximate.data])
    if view is None:
        return fused
    return [fused, tn.ReshapeOp(fused.result, gelu.result.type, list(view.sizes))]


PRODUCTS = (fuse_quantized_output, fuse_float_output, fold_gelu_post_op)


@dataclass(frozen=True)
class FuseQuantPass(ModulePass):
    """q(dq(x)) of the same parameters becomes x; dq -> convolution / linear -> (relu) -> q one oneDNN int8 call
    where the target has one (`products`: Rules.int8_products); a weight-only int8 linear layer one
    tn.weight_int8_mm where the target runs it (`weight_only`: Rules.weight_int8_products, lowering/weight_only.py)."""

    name = "fuse-quant"
    products: bool = True
    weight_only: bool = False

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        rules = (fold_requantize, *(PRODUCTS if self.products else ()), *(WEIGHT_ONLY if self.weight_only else ()))
        if apply_rules(module, rules):
            dce(module)  # the float chains the products replaced: expand-quant must not meet them


__all__ = ["PRODUCTS", "FuseQuantPass", "fold_requantize"]
