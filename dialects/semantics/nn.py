"""The meaning of the tn ops for linear algebra, convolution, pooling, normalisation and indexing.

Each entry is `op class -> fn(op, *operand values)` returning a tensor, or a tuple for a multi-result op.
Ops with optional operands look their values up by name through `_bind`.
"""

import torch

from irc.dialects import tensor as tn

from .bounds import check_index

aten = torch.ops.aten


def _ints(attr) -> list[int]:
    return list(attr.get_values())


def _int(attr) -> int:
    return attr.value.data


def _float(attr) -> float:
    return attr.value.data


def _flag(attr) -> bool:
    return attr is not None


def _bind(op, values):
    """The operand values of `op` keyed by SSA value, so `v(op.weight)` is None for an absent optional operand."""
    env = dict(zip(op.operands, values))
    return lambda operand: None if operand is None else env[operand]


def _conv(op):
    return dict(
        stride=_ints(op.stride),
        padding=_ints(op.padding),
        dilation=_ints(op.dilation),
        transposed=_flag(op.transposed),
        output_padding=_ints(op.output_padding),
        groups=_int(op.groups),
    )


def _convolution(op, *values):
    v = _bind(op, values)
    c = _conv(op)
    x, last = v(op.input), op.channels_last is not None
    if last:  # (N, *spatial, C) -> a channels-last strided (N, C, *spatial) view, and back for the result
        x = x.movedim(-1, 1)
    y = aten.convolution(
        x,
        v(op.weight),
        v(op.bias),
        c["stride"],
        c["padding"],
        c["dilation"],
        c["transposed"],
        c["output_padding"],
        c["groups"],
    )
    return y.movedim(1, -1).contiguous() if last else y


def _convolution_backward(op, grad, x, w):
    c = _conv(op)
    mask = op.requested()
    out_channels = w.shape[1] * c["groups"] if c["transposed"] else w.shape[0]
    grads = aten.convolution_backward(
        grad,
        x,
        w,
        [out_channels],
        c["stride"],
        c["padding"],
        c["dilation"],
        c["transposed"],
        c["output_padding"],
        c["groups"],
        mask,
    )
    return tuple(g for g, m in zip(grads, mask) if m)


def _window(op):
    return _ints(op.kernel), _ints(op.stride), _ints(op.padding)


def _max_pool(op, x):
    k, s, p = _window(op)
    last = op.channels_last is not None
    if last:  # (N, H, W, C) -> (N, C, H, W), and the results back
        x = x.permute(0, 3, 1, 2)
    out = aten.max_pool2d_with_indices(x, k, s, p, _ints(op.dilation), _flag(op.ceil_mode))
    return tuple(r.permute(0, 2, 3, 1).contiguous() for r in out) if last else tuple(out)


def _avg_pool(op, x):
    if op.channels_last is None:
        return aten.avg_pool2d(x, *_avg_args(op))
    return aten.avg_pool2d(x.permute(0, 3, 1, 2), *_avg_args(op)).permute(0, 2, 3, 1).contiguous()


def _max_pool_backward(op, grad, x, indices):
    k, s, p = _window(op)
    return aten.max_pool2d_with_indices_backward(grad, x, k, s, p, _ints(op.dilation), _flag(op.ceil_mode), indices)


def _avg_args(op):
    divisor = None if op.divisor is None else _int(op.divisor)
    return (*_window(op), _flag(op.ceil_mode), _flag(op.count_include_pad), divisor)


def _layer_norm(op, *values):
    v = _bind(op, values)
    x = v(op.input)
    return tuple(aten.native_layer_norm(x, x.shape[_int(op.axis) :], v(op.weight), v(op.bias), _float(op.eps)))


def _batch_norm_inference(op, *values):
    v = _bind(op, values)
    args = (v(op.input), v(op.weight), v(op.bias), v(op.running_mean), v(op.running_var))
    return aten._native_batch_norm_legit_no_training(*args, 0.0, _float(op.eps))[0]


def _batch_norm_training(op, *values):
    v = _bind(op, values)
    args = (v(op.input), v(op.weight), v(op.bias), v(op.running_mean), v(op.running_var))
    return tuple(aten._native_batch_norm_legit_functional(*args, True, _float(op.momentum), _float(op.eps)))


def _indices(op, indices):
    """aten.index's list of optional index tensors: the operands at `dims`, None elsewhere."""
    full: list = [None] * (max(_ints(op.dims)) + 1)
    for d, i in zip(_ints(op.dims), indices):
        full[d] = i
    return full


def _index(op, x, *indices):
    return aten.index.Tensor(x, _indices(op, indices))


def _index_put(op, x, *rest):
    *indices, values = rest
    return aten.index_put(x, _indices(op, indices), values, _flag(op.accumulate))


def _scatter_reduce(op, x, index, src):
    return torch.scatter_reduce(x, _int(op.dim), index, src, op.reduce.data, include_self=_flag(op.include_self))


def sdpa(q, k, v, mask, scale: float, causal: bool = False, logsumexp: bool = False):
    """tn.sdpa (the CPU target's extern calls this too): torch's scaled_dot_product_attention; causal or with its
    logsumexp (a training graph's forward, whose backward reads it), the CPU flash-attention kernel itself."""
    if not causal and not logsumexp:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    out, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask, scale=scale)
    return (out, lse) if logsumexp else out


def _addmm(op, a, b, bias):
    r = torch.addmm(bias, a, b)
    epilogue = op.epilogue_name
    return (
        r
        if epilogue is None
        else torch.nn.functional.gelu(r, approximate="tanh" if epilogue == "gelu_tanh" else "none")
    )


def sdpa_call(op):
    """tn.sdpa's meaning with its attributes read once: call(*operand values) (a library call per run reads no IR)."""
    at = {v: i for i, v in enumerate(op.operands)}
    q, k, v, mask = at[op.query], at[op.key], at[op.value], at[op.mask] if op.mask is not None else None
    scale, causal, lse, last = _float(op.scale), _flag(op.causal), op.logsumexp is not None, _flag(op.heads_last)

    def call(*values):
        r = sdpa(values[q], values[k], values[v], None if mask is None else values[mask], scale, causal, lse)
        if not last:
            return r
        return (r[0].transpose(-3, -2), r[1].transpose(-2, -1)) if lse else r.transpose(-3, -2)

    return call


def sdpa_backward_call(op):
    """tn.sdpa_backward's meaning with its attributes read once: call(*operand values)."""
    at = {v: i for i, v in enumerate(op.operands)}
    grad, q, k, v, out, lse = (at[x] for x in (op.grad, op.query, op.key, op.value, op.out, op.logsumexp))
    mask = at[op.mask] if op.mask is not None else None
    scale, causal, last = _float(op.scale), _flag(op.causal), _flag(op.heads_last)

    def call(*values):
        grads = aten._scaled_dot_product_flash_attention_for_cpu_backward(
            values[grad],
            values[q],
            values[k],
            values[v],
            values[out],
            values[lse],
            0.0,
            causal,
            attn_mask=None if mask is None else values[mask],
            scale=scale,
        )
        return tuple(g.transpose(-3, -2) for g in grads) if last else tuple(grads)

    return call


NN_SEMANTICS = {
    # linear algebra
    tn.MmOp: lambda op, a, b: torch.mm(a, b),
    tn.AddmmOp: _addmm,
    tn.BmmOp: lambda op, a, b: torch.bmm(a, b),
    tn.ScaledDotProductAttentionOp: lambda op, *values: sdpa_call(op)(*values),
    tn.ScaledDotProductAttentionBackwardOp: lambda op, *values: sdpa_backward_call(op)(*values),
    # convolution and pooling
    tn.ConvolutionOp: _convolution,
    tn.ConvolutionBackwardOp: _convolution_backward,
    tn.MaxPool2dOp: _max_pool,
    tn.MaxPool2dBackwardOp: _max_pool_backward,
    tn.AvgPool2dOp: _avg_pool,
    tn.AvgPool2dBackwardOp: lambda op, g, x: aten.avg_pool2d_backward(g, x, *_avg_args(op)),
    tn.AdaptiveAvgPool2dOp: lambda op, x: aten._adaptive_avg_pool2d(x, _ints(op.output_size)),
    tn.AdaptiveAvgPool2dBackwardOp: lambda op, g, x: aten._adaptive_avg_pool2d_backward(g, x),
    # normalisation
    tn.LayerNormOp: _layer_norm,
    tn.BatchNormInferenceOp: _batch_norm_inference,
    tn.BatchNormTrainingOp: _batch_norm_training,
    tn.SoftmaxOp: lambda op, x: torch.softmax(x, _int(op.dim)),
    tn.LogSoftmaxOp: lambda op, x: torch.log_softmax(x, _int(op.dim)),
    # indexing
    tn.EmbeddingOp: lambda op, w, i: aten.embedding(w, i),
    tn.EmbeddingBackwardOp: lambda op, g, i, *n: aten.embedding_dense_backward(
        g, i, n[0] if n else op.result.type.get_shape()[0], _int(op.padding_idx), _flag(op.scale_grad_by_freq)
    ),
    tn.IndexSelectOp: lambda op, x, i: torch.index_select(x, _int(op.dim), i),
    tn.GatherOp: lambda op, x, i: torch.gather(x, _int(op.dim), i),
    tn.IndexOp: _index,
    tn.CheckIndexOp: check_index,
    tn.ScatterOp: lambda op, x, i, s: torch.scatter(x, _int(op.dim), i, s),
    tn.ScatterReduceOp: _scatter_reduce,
    tn.IndexPutOp: _index_put,
    tn.SelectScatterOp: lambda op, x, s: torch.select_scatter(x, s, _int(op.dim), _int(op.index)),
    tn.SliceScatterOp: lambda op, x, s: torch.slice_scatter(
        x, s, _int(op.dim), _int(op.start), _int(op.end), _int(op.step)
    ),
}
