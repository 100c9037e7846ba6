"""torch's own transformer modules (bench/models.py: TorchTransformer over nn.TransformerEncoder,
SelfAttention over nn.MultiheadAttention), tiny configurations, compiled with irc (strict): inference
(eval without grad takes torch's encoder fast path, one fused op per layer), key-padding masks, and a
training step, all against eager and with no eager fallback in any graph.

Two irc bugs these found (frontend/attention_ops.py): the encoder fast path ran eagerly (no decomposition
of `_transformer_encoder_layer_fwd`), and training through CPU flash attention gave gradients off by
orders of magnitude (torch's forward decomposition returns the probabilities where the backward op reads
the logsumexp).
"""

import pytest
import torch

from irc import report
from irc.bench import models as M
from irc.bench.check import FORWARD_TOL, assert_close, compare_steps, loss_fn, targets_for, train_step, twin
from tests.conftest import compile_irc

TINY = {"vocab": 100, "d_model": 32, "heads": 4, "layers": 2, "d_ff": 64, "max_len": 32}

MODELS = {
    "torch-transformer": lambda: M.torch_transformer(batch=2, seq=16, **TINY),
    "torch-transformer-mask": lambda: M.torch_transformer(batch=3, seq=16, mask=True, **TINY),
    "torch-mha": lambda: M.self_attention(batch=2, seq=16, d_model=32, heads=4),
    "torch-mha-mask": lambda: M.self_attention(batch=3, seq=16, d_model=32, heads=4, mask=True),
}


def _native(rep: report.CompileReport) -> None:
    assert rep.graphs and [g.eager_graph for g in rep.graphs if g.eager_graph] == [], str(rep)
    assert sorted({f[0] for f in rep.fallbacks}) == [], str(rep)


@pytest.mark.parametrize("name", MODELS)
def test_inference_matches_eager_without_fallback(name):
    model, inputs = MODELS[name]()
    model.eval()
    mine = twin(model)
    mark = report.mark()
    with torch.no_grad():  # eval + no grad: nn.TransformerEncoderLayer's fast path in eager and in the trace
        want = model(*inputs)
        got = compile_irc(mine)(*inputs)
    assert_close("forward output", got, want, FORWARD_TOL)
    _native(report.reports_since(mark))


@pytest.mark.parametrize("name", ["torch-transformer", "torch-mha-mask"])
def test_training_step_matches_eager_without_fallback(name):
    """Loss, every gradient, parameters after SGD with momentum, the loss after the step."""
    model, inputs = MODELS[name]()
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    mark = report.mark()
    got = train_step(mine, inputs, compile_irc(loss_fn(mine)), target, optimizer="sgd")
    rep = report.reports_since(mark)
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    assert set(got.grads) == {n for n, p in model.named_parameters()}
    compare_steps(got, want)
    assert {g.kind for g in rep.graphs} == {"forward", "backward"}, str(rep)
    _native(rep)


SDPA = {
    "plain": {},
    "causal": {"is_causal": True},
    "bool-mask": {"attn_mask": "bool"},
    "float-mask": {"attn_mask": "float"},
    "gqa-causal": {"enable_gqa": True, "is_causal": True},
}


@pytest.mark.parametrize("case", SDPA)
def test_scaled_dot_product_attention_gradients(case):
    """F.scaled_dot_product_attention trained through irc: the CPU flash backward's decomposition, with masks,
    causal attention and grouped-query heads (2 key/value heads for 4 query heads)."""
    kw = dict(SDPA[case])
    g = torch.Generator().manual_seed(0)
    kv_heads = 2 if kw.get("enable_gqa") else 4
    q = torch.randn(2, 4, 8, 16, generator=g)
    k, v = torch.randn(2, kv_heads, 8, 16, generator=g), torch.randn(2, kv_heads, 8, 16, generator=g)
    if kw.get("attn_mask") == "bool":
        kw["attn_mask"] = torch.rand(8, 8, generator=g) > 0.3
        kw["attn_mask"].fill_diagonal_(True)
    elif kw.get("attn_mask") == "float":
        kw["attn_mask"] = torch.randn(2, 1, 8, 8, generator=g)

    def fn(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)

    grads = []
    for f in (fn, compile_irc(fn)):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        out = f(*leaves)
        out.backward(torch.ones_like(out))
        grads.append((out.detach(), [t.grad for t in leaves]))
    (want, want_g), (got, got_g) = grads
    assert_close("output", got, want, FORWARD_TOL)
    for name, a, b in zip("qkv", got_g, want_g):
        assert_close(f"grad {name}", a, b, {"rtol": 1e-4, "atol": 1e-5})
