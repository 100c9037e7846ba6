"""Convolution, pooling, normalisation, softmax, dropout and attention. Window arguments arrive in aten's short forms (an int,
a one-element list, an empty stride meaning "the kernel") and are spelled out per spatial dim here."""

import math
import operator

import torch

from irc.dialects import tensor as tn

from ..aten_table import Unsupported, imports, verified

aten = torch.ops.aten


def rank(v) -> int:
    return len(v.type.get_shape())


def spelled(value, n: int, what: str) -> list[int]:
    """aten's int-or-list argument as n ints; symbolic values are not supported."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * n
    if len(values) != n or not all(isinstance(v, int) for v in values):
        raise Unsupported(f"{what} {value!r} is not {n} static ints")
    return values


def window(kernel, stride, padding, dilation=1):
    k = spelled(kernel, 2, "kernel_size")
    s = k if not stride else spelled(stride, 2, "stride")
    return k, s, spelled(padding, 2, "padding"), spelled(dilation, 2, "dilation")


# ---- convolution ---------------------------------------------------------------------------------


def conv_properties(x, stride, padding, dilation, transposed, output_padding, groups) -> dict:
    n = rank(x) - 2
    if not isinstance(groups, int):
        raise Unsupported("symbolic groups")
    return dict(
        stride=spelled(stride, n, "stride"),
        padding=spelled(padding, n, "padding"),
        dilation=spelled(dilation, n, "dilation"),
        transposed=bool(transposed),
        output_padding=spelled(output_padding, n, "output_padding"),
        groups=groups,
    )


@imports(aten.convolution.default)
def import_convolution(b, node, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    props = conv_properties(x, stride, padding, dilation, transposed, output_padding, groups)
    return b.add(tn.ConvolutionOp(x, w, bias, b.result_type(node), **props))


@imports(aten.convolution_backward.default)
def import_convolution_backward(
    b, node, grad, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask
):
    props = conv_properties(x, stride, padding, dilation, transposed, output_padding, groups)
    if not any(output_mask):
        return (None, None, None)
    op = b.insert(tn.ConvolutionBackwardOp(grad, x, w, output_mask, **props))
    grads = iter(op.results)
    return tuple(next(grads) if m else None for m in output_mask)


# ---- pooling -------------------------------------------------------------------------------------


@imports(aten.max_pool2d_with_indices.default)
def import_max_pool2d(b, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = window(kernel_size, stride, padding, dilation)
    op = b.insert(tn.MaxPool2dOp(x, k, s, p, d, ceil_mode, b.result_type(node, 0)))
    return op.result, op.indices


@imports(aten.max_pool2d_with_indices_backward.default)
def import_max_pool2d_backward(b, node, grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    k, s, p, d = window(kernel_size, stride, padding, dilation)
    return b.add(tn.MaxPool2dBackwardOp(grad, x, indices, k, s, p, d, ceil_mode))


@imports(aten.avg_pool2d.default)
def import_avg_pool2d(
    b, node, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    k, s, p, _ = window(kernel_size, stride, padding)
    return b.add(tn.AvgPool2dOp(x, k, s, p, ceil_mode, count_include_pad, divisor_override, b.result_type(node)))


@imports(aten.avg_pool2d_backward.default)
def import_avg_pool2d_backward(
    b, node, grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    k, s, p, _ = window(kernel_size, stride, padding)
    return b.add(tn.AvgPool2dBackwardOp(grad, x, k, s, p, ceil_mode, count_include_pad, divisor_override))


@imports(aten._adaptive_avg_pool2d.default)
def import_adaptive_avg_pool2d(b, node, x, output_size):
    return b.add(tn.AdaptiveAvgPool2dOp(x, spelled(output_size, 2, "output_size")))


@imports(aten._adaptive_avg_pool2d_backward.default)
def import_adaptive_avg_pool2d_backward(b, node, grad, x):
    return b.add(tn.AdaptiveAvgPool2dBackwardOp(grad, x))


# ---- normalisation and softmax -------------------------------------------------------------------


@imports(aten.native_layer_norm.default)
def import_layer_norm(b, node, x, normalized_shape, weight, bias, eps):
    axis = rank(x) - len(normalized_shape)
    op = b.insert(tn.LayerNormOp(x, weight, bias, axis, eps, b.result_type(node, 1)))
    return tuple(op.results)


def _empty(b, node, i):
    meta = node.meta["val"][i]
    return b.expand(b.constant(0, meta.dtype), meta.shape)


def _as_fx(b, node, results):
    """The results in the dtypes FX's meta gives them: for narrow running statistics (a model cast whole to bf16) the
    meta says float32 while eager's kernel returns them in their own dtype, so the value is eager's, widened exactly."""
    return tuple(b.convert(r, meta.dtype) for r, meta in zip(results, node.meta["val"]))


@imports(aten._native_batch_norm_legit_no_training.default)
def import_batch_norm_inference(b, node, x, weight, bias, running_mean, running_var, momentum, eps):
    out = b.add(tn.BatchNormInferenceOp(x, weight, bias, running_mean, running_var, eps))
    return out, _empty(b, node, 1), _empty(b, node, 2)


@imports(aten._native_batch_norm_legit_functional.default)
def import_batch_norm_training(b, node, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if not training:
        raise Unsupported("functional batch norm with training=False")
    op = b.insert(
        tn.BatchNormTrainingOp(x, weight, bias, running_mean, running_var, momentum, eps, b.result_type(node, 1))
    )
    return _as_fx(b, node, op.results)


@imports(aten._native_batch_norm_legit.no_stats)
def import_batch_norm_no_stats(b, node, x, weight, bias, training, momentum, eps):
    """Training without running statistics: the training op on placeholder statistics whose updates nobody reads."""
    if not training:
        raise Unsupported("batch norm with neither running statistics nor training")
    stats = node.meta["val"][1]
    zeros, ones = b.expand(b.constant(0, stats.dtype), stats.shape), b.expand(b.constant(1, stats.dtype), stats.shape)
    op = b.insert(tn.BatchNormTrainingOp(x, weight, bias, zeros, ones, momentum, eps, b.result_type(node, 1)))
    return tuple(op.results[:3])


@imports(aten._softmax.default, aten._log_softmax.default)
def import_softmax(b, node, x, dim, half_to_float):
    if half_to_float:
        raise Unsupported("softmax with half_to_float")
    if not node.meta["val"].dtype.is_floating_point:  # eager has no integer kernel: only an empty tensor gets here
        raise Unsupported(f"softmax of a {node.meta['val'].dtype} tensor")
    op_cls = tn.SoftmaxOp if node.target == aten._softmax.default else tn.LogSoftmaxOp
    return b.add(op_cls(x, dim % max(rank(x), 1)))


@imports(aten.native_dropout.default)
def import_native_dropout(b, node, x, p, train):
    """Keep each element with probability 1 - p and scale kept ones by 1 / (1 - p); the mask is the second result."""
    out = node.meta["val"][0]
    if train is False or p == 0:
        return x, b.expand(b.constant(True, torch.bool), out.shape)
    noise = b.add(tn.RandOp(b.result_type(node, 0), b.dynamic_sizes(out.shape)))
    keep = b.add(tn.LtOp(noise, b.tensor(1.0 - p, out.dtype)))
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    kept = b.add(tn.MulOp(x, b.convert(keep, out.dtype)))
    return b.add(tn.MulOp(kept, b.tensor(scale, out.dtype))), keep


# ---- attention -------------------------------------------------------------------------------------


def _attention(q, dropout_p, scale) -> float:
    """The scale of a flash-attention call without dropout, else Unsupported: the aten op then runs as it is, forward
    and backward alike (as where tn's verifier refuses the call: grouped-query heads, a mask of another type)."""
    qs = q.type.get_shape()
    if dropout_p:
        raise Unsupported("attention dropout")
    if scale is None and qs[-1] < 0:
        raise Unsupported("attention's default scale of a dynamic head size")
    return scale if scale is not None else 1.0 / math.sqrt(qs[-1])


@imports(aten._scaled_dot_product_flash_attention_for_cpu.default)
def import_flash_attention(b, node, q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    """torch's CPU flash attention as tn.sdpa, with its logsumexp only where a backward reads it."""
    s = _attention(q, dropout_p, scale)
    read = any(u.target is operator.getitem and u.args[1] == 1 and u.users for u in node.users)
    op = b.insert(verified(tn.ScaledDotProductAttentionOp(q, k, v, attn_mask, s, bool(is_causal), logsumexp=read)))
    return op.result, op.logsumexp


@imports(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)
def import_flash_attention_backward(
    b, node, grad, q, k, v, out, logsumexp, dropout_p, is_causal, *, attn_mask=None, scale=None
):
    s = _attention(q, dropout_p, scale)
    op = b.insert(
        verified(tn.ScaledDotProductAttentionBackwardOp(grad, q, k, v, out, logsumexp, attn_mask, s, bool(is_causal)))
    )
    return op.grad_query, op.grad_key, op.grad_value
