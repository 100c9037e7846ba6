"""torch's fused attention ops that irc's decomposition table takes apart into ops irc imports.

The encoder-layer fast path. nn.TransformerEncoderLayer in inference (eval, no grad) calls one fused op,
`_transformer_encoder_layer_fwd`, that no table decomposes: irc would run whole layers eagerly. Its
decomposition is the layer written out (qkv projection, scaled-dot-product attention with the merged
mask, output projection, residuals, LayerNorms before or after, ReLU or GELU feed-forward).

CPU flash attention and its backward import whole, as tn.sdpa (with the logsumexp the backward reads) and
tn.sdpa_backward: torch's own kernels, as in eager. Only with options attention=False (no tn.sdpa: attention as
generated loops) are both decomposed, and then together: torch's core decomposition of the forward runs the math
attention and returns its attention *probabilities* where the real op returns the logsumexp, so a decomposed forward
before the real backward gives gradients off by orders of magnitude (nn.MultiheadAttention's in_proj grads, found by
tests/numeric/test_torch_models.py). The backward's decomposition (UNFUSED) never reads the logsumexp: it recomputes
the probabilities P from q, k (and the mask) as the decomposed forward did, then

    dV = P^T dO      dP = dO V^T      dS = P * (dP - rowsum(P * dP))      dQ = s dS K      dK = s dS^T Q

(grouped-query attention too: key and value heads repeated, their gradients summed back). Dropout keeps the aten
ops (torch's forward decomposition refuses it).
"""

import math

import torch
import torch.nn.functional as F

aten = torch.ops.aten


def flash_attention_backward(
    grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *, attn_mask=None, scale=None
):
    if dropout_p != 0.0 or query.size(1) % key.size(1):
        return NotImplemented
    groups = query.size(1) // key.size(1)  # grouped-query attention: each key/value head serves `groups` query heads
    if groups > 1:
        k_heads, key, value = key.size(1), key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    s = scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    _, p = aten._scaled_dot_product_attention_math.default(
        query, key, value, attn_mask=attn_mask, dropout_p=0.0, is_causal=is_causal, scale=scale
    )
    grad_out = grad_out.to(p.dtype)
    grad_v = p.transpose(-2, -1) @ grad_out
    grad_p = grad_out @ value.transpose(-2, -1)
    grad_s = p * (grad_p - (p * grad_p).sum(-1, keepdim=True))
    grad_q = (grad_s @ key) * s
    grad_k = (grad_s.transpose(-2, -1) @ query) * s
    if groups > 1:  # the repeated heads' gradients summed back onto each key/value head
        grad_k, grad_v = (g.unflatten(1, (k_heads, groups)).sum(2) for g in (grad_k, grad_v))
    return grad_q.to(query.dtype), grad_k.to(key.dtype), grad_v.to(value.dtype)


def _sdpa_mask(mask, mask_type, batch: int, seq: int):
    """The fast path's merged mask (True or -inf where a key is hidden) as scaled_dot_product_attention's
    attn_mask (True or 0 where a key is visible): type 0 (L, L), type 1 key padding (B, L), type 2 (B, H, L, L)."""
    if mask is None:
        return None
    if mask_type == 1:
        mask = mask.view(batch, 1, 1, seq)
    return ~mask if mask.dtype == torch.bool else mask


def transformer_encoder_layer(
    src,
    embed_dim,
    num_heads,
    qkv_weight,
    qkv_bias,
    proj_weight,
    proj_bias,
    use_gelu,
    norm_first,
    eps,
    norm_weight_1,
    norm_bias_1,
    norm_weight_2,
    norm_bias_2,
    ffn_weight_1,
    ffn_bias_1,
    ffn_weight_2,
    ffn_bias_2,
    mask=None,
    mask_type=None,
):
    if src.is_nested or src.dim() != 3:
        return NotImplemented
    b, n, e = src.shape
    attn_mask = _sdpa_mask(mask, mask_type, b, n)

    def self_attention(x):
        q, k, v = F.linear(x, qkv_weight, qkv_bias).view(b, n, 3, num_heads, e // num_heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return F.linear(y.transpose(1, 2).reshape(b, n, e), proj_weight, proj_bias)

    def feed_forward(x):
        h = F.linear(x, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(h) if use_gelu else F.relu(h), ffn_weight_2, ffn_bias_2)

    def norm1(x):
        return F.layer_norm(x, (e,), norm_weight_1, norm_bias_1, eps)

    def norm2(x):
        return F.layer_norm(x, (e,), norm_weight_2, norm_bias_2, eps)

    if norm_first:
        x = src + self_attention(norm1(src))
        return x + feed_forward(norm2(x))
    x = norm1(src + self_attention(src))
    return norm2(x + feed_forward(x))


def _encoder_layer_or_fast_path(*args, **kwargs):
    """The layer written out (transformer_encoder_layer), or torch's fused op where that declines (nested input)."""
    out = transformer_encoder_layer(*args, **kwargs)
    return torch._transformer_encoder_layer_fwd(*args, **kwargs) if out is NotImplemented else out


def inline_encoder_layers(gm: torch.fx.GraphModule) -> None:
    """Dynamo's graph with each call of the encoder-layer fast path replaced by the layer written out, before AOT
    autograd traces it. Eager's fused kernel calls its products through the dispatcher, so under
    CPU autocast they run in bf16 / f16; the decomposition table applies below autocast, where they stayed float32
    (nn.TransformerEncoder compiled under bf16 autocast ran at 0.4x eager-bf16, inductor alike). Traced from here,
    autocast lowers the layer's ops as it lowers any others."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is torch._transformer_encoder_layer_fwd]
    for n in nodes:
        n.target = _encoder_layer_or_fast_path
    if nodes:
        gm.recompile()


# With options attention=False: both flash-attention ops decomposed (the forward by torch's core table).
UNFUSED = {
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default: flash_attention_backward,
}

DECOMPOSITIONS = {
    aten._transformer_encoder_layer_fwd.default: transformer_encoder_layer,
}
