"""Attention written out (matmul, scale, mask, softmax, matmul) against eager, with the fuse-attention substitution
(one tn.sdpa extern, torch's scaled_dot_product_attention) and without it (options={"attention": False})."""

import math

import pytest
import torch

import irc
from irc.bench.models import MiniTransformer, self_attention
from tests.conftest import compile_irc

TOL = dict(atol=2e-5, rtol=2e-5)


def scaled(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


def unscaled_3d(q, k, v):
    return torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1) @ v


def masked_fill(q, k, v, keep):
    s = (q @ k.transpose(-2, -1)) * 0.3
    s = s.masked_fill(~keep[:, None, None, :], float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def additive(q, k, v, bias):
    return torch.softmax(q @ k.transpose(-2, -1) * 0.25 + bias, dim=-1) @ v


def torch_sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def torch_sdpa_mask(q, k, v, mask):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)


def torch_sdpa_causal(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def _qkv(b, h, L, S, E, Ev, *, strided=False):
    g = torch.Generator().manual_seed(0)
    if strided:  # heads split out of one (b, n, 3, h, e) projection, as a transformer does: non-contiguous views
        x = torch.randn(b, L, 3, h, E, generator=g)
        return tuple(x.permute(2, 0, 3, 1, 4))
    return (
        torch.randn(b, h, L, E, generator=g),
        torch.randn(b, h, S, E, generator=g),
        torch.randn(b, h, S, Ev, generator=g),
    )


CASES = {
    "scaled": (scaled, lambda: _qkv(2, 3, 7, 5, 16, 9)),
    "scaled-strided": (scaled, lambda: _qkv(2, 4, 6, 6, 8, 8, strided=True)),
    "unscaled-3d": (unscaled_3d, lambda: tuple(t[0] for t in _qkv(1, 3, 5, 11, 4, 6))),
    "masked-fill": (
        masked_fill,
        lambda: (*_qkv(3, 2, 9, 9, 8, 8), torch.arange(9)[None, :] < torch.tensor([[9], [4], [1]])),
    ),
    "additive": (additive, lambda: (*_qkv(2, 2, 5, 7, 8, 3), torch.randn(5, 7))),
    # torch's own SDPA, which AOT autograd decomposes (q and k^T scaled by sqrt(scale) each, a safe softmax)
    "torch-sdpa": (torch_sdpa, lambda: _qkv(2, 3, 7, 5, 16, 9)),
    "torch-sdpa-bool-mask": (torch_sdpa_mask, lambda: (*_qkv(2, 2, 4, 6, 8, 8), torch.rand(2, 1, 4, 6) > 0.4)),
    "torch-sdpa-float-mask": (torch_sdpa_mask, lambda: (*_qkv(2, 2, 4, 6, 8, 8), torch.randn(4, 6))),
    "torch-sdpa-causal": (torch_sdpa_causal, lambda: _qkv(1, 2, 6, 6, 8, 4)),
    "torch-sdpa-causal-heads-alike": (torch_sdpa_causal, lambda: _qkv(2, 2, 7, 7, 8, 8)),  # flash attention's case
}


@pytest.mark.parametrize("attention", [True, False], ids=["sdpa", "unfused"])
@pytest.mark.parametrize("case", CASES)
def test_attention_matches_eager(case, attention):
    fn, make = CASES[case]
    args = make()
    got = compile_irc(fn, attention=attention)(*args)
    torch.testing.assert_close(got, fn(*args), **TOL)


def test_fully_masked_rows_of_torch_sdpa_stay_zero():
    """torch's SDPA gives 0 for a query whose every key is masked; so do its decomposition and tn.sdpa."""
    q, k, v = _qkv(1, 2, 4, 5, 8, 8)
    mask = torch.ones(1, 1, 4, 5, dtype=torch.bool)
    mask[..., 1, :] = False
    want = torch_sdpa_mask(q, k, v, mask)
    assert bool((want[:, :, 1] == 0).all())
    for attention in (True, False):
        torch.testing.assert_close(compile_irc(torch_sdpa_mask, attention=attention)(q, k, v, mask), want, **TOL)


@pytest.mark.parametrize("case", ["scaled", "masked-fill", "torch-sdpa", "torch-sdpa-bool-mask"])
def test_substitution_shows_in_report(case):
    fn, make = CASES[case]
    externs = irc.explain(fn, *make(), options={"strict": True}).graphs[0].externs
    assert externs.count("tn.sdpa") == 1 and "tn.bmm" not in externs
    externs = irc.explain(fn, *make(), options={"strict": True, "attention": False}).graphs[0].externs
    assert "tn.sdpa" not in externs and externs.count("tn.bmm") == 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16-autocast"])
def test_projection_of_a_transposed_input_is_one_product(dtype):
    """nn.MultiheadAttention (batch_first) projects its input transposed to (seq, batch, features): under autocast
    AOT autograd writes that linear layer as a bmm by the weight broadcast over the batch (in float32 as a mm), which
    simplify-tensor makes one tn.mm of all the rows; the library had copied the broadcast weight once per batch entry."""
    torch.manual_seed(0)
    model, (x,) = self_attention(batch=3, seq=7, d_model=16, heads=2)
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype, enabled=dtype != torch.float32):
        [g] = irc.explain(model, x, options={"strict": True}).graphs
        got, want = compile_irc(model)(x), model(x)
    assert "tn.bmm" not in g.externs, g.externs
    tol = TOL if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)  # bf16: eps 2^-8, 16-term sums
    torch.testing.assert_close(got.float(), want.float(), **tol)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_attention_under_autocast_becomes_sdpa(dtype):
    """Under autocast the importer writes the scores' division widened (convert, f32 div, convert back): the
    masked attention of MiniTransformer still becomes one tn.sdpa per layer, and its logits stay within the
    narrow type's tolerance of eager's."""
    torch.manual_seed(0)
    model = MiniTransformer(vocab=100, d_model=32, heads=4, layers=2, d_ff=64, max_len=16, dropout=0.0).eval()
    ids, keep = torch.randint(0, 100, (4, 16)), torch.arange(16)[None, :] < torch.tensor([[16], [9], [12], [8]])
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        [g] = irc.explain(model, ids, keep, options={"strict": True}).graphs
        got, want = compile_irc(model)(ids, keep), model(ids, keep)
    assert g.externs.count("tn.sdpa") == 2 and "tn.bmm" not in g.externs, g.externs
    torch.testing.assert_close(got.float(), want.float(), atol=3e-2, rtol=3e-2)  # bf16 eps 2^-8 over 2 layers


def merged(w, q, k, v, mask=None, causal=False):
    """The heads merged after attention and read by a matrix product, as a transformer's output projection does."""
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    return o.transpose(1, 2).reshape(q.shape[0] * q.shape[2], -1) @ w


@pytest.mark.parametrize("how", ["plain", "strided", "float-mask", "causal"])
def test_merged_heads_read_the_attention_as_torch_writes_it(how):
    """fold-permutes gives the attention its heads after its rows (tn.sdpa heads_last), torch's flash kernel's own
    layout: the merge is a view of torch's result, with no copy (a kernel or a planned tn.reshape) before the product."""
    q, k, v = _qkv(2, 3, 7, 7, 8, 8, strided=how == "strided")
    args = (torch.randn(24, 5, generator=torch.Generator().manual_seed(2)), q, k, v)
    args += {
        "float-mask": (torch.randn(2, 1, 7, 7, generator=torch.Generator().manual_seed(1)),),
        "causal": (None, True),
    }.get(how, ())
    [g] = irc.explain(merged, *args, options={"strict": True}).graphs
    assert g.externs == ["tn.sdpa", "tn.mm"] and g.fused_kernels == 0 and g.intermediate_bytes == 0, str(g)
    torch.testing.assert_close(compile_irc(merged)(*args), merged(*args), **TOL)


def test_training_graph_keeps_its_products():
    """The forward graph of a training step saves the probabilities for the backward: no substitution, same gradients."""
    q, k, v = (t.clone().requires_grad_() for t in _qkv(2, 2, 5, 5, 8, 8))
    compiled = compile_irc(scaled)
    compiled(q, k, v).sum().backward()
    grads = [t.grad for t in (q, k, v)]
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    scaled(q2, k2, v2).sum().backward()
    for g, want in zip(grads, (q2.grad, k2.grad, v2.grad)):
        torch.testing.assert_close(g, want, **TOL)
    forward = [g for g in irc.explain(scaled, q, k, v, options={"strict": True}).graphs if g.kind == "forward"]
    assert forward and "tn.sdpa" not in forward[0].externs


@pytest.mark.parametrize("attention", [True, False], ids=["sdpa", "unfused"])
@pytest.mark.parametrize("case", ["torch-sdpa-bool-mask", "torch-sdpa-float-mask", "torch-sdpa-causal-heads-alike"])
def test_training_with_torch_sdpa(case, attention):
    """A training step through torch's SDPA: by default its forward is tn.sdpa with the logsumexp and its backward
    tn.sdpa_backward (torch's flash kernels, as eager); with attention=False both are batched matmuls and kernels.
    Gradients equal eager's either way."""
    from irc import report

    fn, make = CASES[case]
    args = make()
    leaves = [t.clone().requires_grad_() for t in args[:3]]
    torch._dynamo.reset()
    start = report.mark()
    (compile_irc(fn, attention=attention)(*leaves, *args[3:]) * torch.arange(args[2].shape[-1])).sum().backward()
    graphs = report.reports_since(start).graphs
    mine = [t.grad for t in leaves]
    eager = [t.clone().requires_grad_() for t in args[:3]]
    (fn(*eager, *args[3:]) * torch.arange(args[2].shape[-1])).sum().backward()
    for got, want in zip(mine, (t.grad for t in eager)):
        torch.testing.assert_close(got, want, **TOL)
    externs = {g.kind: g.externs for g in graphs}
    assert set(externs) == {"forward", "backward"}
    if attention:
        assert externs["forward"].count("tn.sdpa") == 1 and externs["backward"].count("tn.sdpa_backward") == 1, externs
    else:
        assert not any(e.startswith("tn.sdpa") for es in externs.values() for e in es), externs


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_training_attention_in_half_precision(dtype):
    """Half-precision queries: the logsumexp is float32 (torch's flash kernel's); the backward runs torch's float32
    flash backward on the widened operands (split-addmm: its bf16 and f16 kernels ran 2-3x slower), each gradient
    rounded once, judged against float64 beside eager's."""
    from irc import report
    from tests.numeric.low_precision import assert_low_precision_close

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 8, 16, generator=g).to(dtype) for _ in range(3))
    mask = torch.randn(8, 8, generator=g).to(dtype)
    fn = lambda q, k, v, m: torch_sdpa_mask(q, k, v, m).float().pow(2).sum()  # noqa: E731
    mine, eager, ref = ([t.clone().double() if i == 2 else t.clone() for t in (q, k, v)] for i in range(3))
    for t in (*mine, *eager, *ref):
        t.requires_grad_()
    torch._dynamo.reset()
    start = report.mark()
    compile_irc(fn)(*mine, mask).backward()
    fn(*eager, mask).backward()
    fn(*ref, mask.double()).backward()
    assert_low_precision_close([t.grad for t in mine], [t.grad for t in eager], [t.grad for t in ref], dtype)
    backward = [p for gr in report.reports_since(start).graphs if gr.kind == "backward" for p in gr.extern_paths]
    assert [p.split()[0] for p in backward] == ["tn.sdpa_backward"] and backward[0].endswith(" float32"), backward


@pytest.mark.parametrize("attention", [True, False], ids=["sdpa", "unfused"])
def test_small_transformer_with_causal_mask(attention):
    """tests/numeric/test_nn_models.py's MiniTransformer (masked_fill of a causal mask, a scale on the right), both ways."""
    from tests.numeric.test_nn_models import CASES as MODELS

    torch.manual_seed(0)
    model, inputs = MODELS["transformer-masked"]()
    model.eval()
    with torch.no_grad():
        graphs = irc.explain(model, *inputs, options={"strict": True, "attention": attention}).graphs
        assert [g.attention for g in graphs] == [len(model.blocks) if attention else 0]
        torch.testing.assert_close(compile_irc(model, attention=attention)(*inputs), model(*inputs), **TOL)


@pytest.mark.parametrize("padded", [False, True], ids=["no-mask", "key-padding"])
def test_multihead_attention_module(padded):
    """nn.MultiheadAttention (which calls torch's SDPA) in inference: frozen projections, one tn.sdpa, eager's numbers."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(3, 6, 16)
    pad = torch.arange(6)[None, :] >= torch.tensor([[6], [4], [2]]) if padded else None
    fn = lambda x, pad: mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]  # noqa: E731
    with torch.no_grad():
        [g] = irc.explain(fn, x, pad, options={"strict": True}).graphs
        assert g.attention == 1, str(g)
        torch.testing.assert_close(compile_irc(fn)(x, pad), fn(x, pad), **TOL)


def test_grouped_query_training_attention_stays_torchs_op():
    """Key/value heads unlike the query's: tn.sdpa's verifier refuses the flash call, which then runs as the aten op
    (forward and backward alike); the refused op must leave no use behind on its operands. Eager's gradients."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(2, 4, 8, 16, generator=g),
        torch.randn(2, 2, 8, 16, generator=g),
        torch.randn(2, 2, 8, 16, generator=g),
    )
    fn = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True).pow(2).sum()  # noqa: E731
    mine, eager = ([t.clone().requires_grad_() for t in (q, k, v)] for _ in range(2))
    compile_irc(fn)(*mine).backward()
    fn(*eager).backward()
    for a, b in zip(mine, eager):
        torch.testing.assert_close(a.grad, b.grad, **TOL)
