"""fold-bias on the CPU target (lowering/fold_bias.py, CpuTarget.biased_products): a frozen linear layer whose bias
add no kernel joins (its output goes to attention, or is returned) runs as one oneDNN call that adds the bias, with
eager's numbers; a bias add a kernel does more in, or a training graph's product (MKL's), keeps its kernel."""

import math

import pytest
import torch
import torch.nn.functional as F

from irc import report
from irc.targets.cpu.libs import externs
from tests.conftest import compile_irc

TOL = dict(rtol=1e-4, atol=1e-4, equal_nan=True)
ONEDNN = externs.onednn_available(torch.float32)


class Attention(torch.nn.Module):
    """q and k projections straight into attention (BERT's shape of it, small), and k returned too."""

    def __init__(self, d=128, heads=4):
        super().__init__()
        self.q, self.k, self.heads = torch.nn.Linear(d, d), torch.nn.Linear(d, d), heads

    def forward(self, x):
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        k = self.k(x)
        return F.scaled_dot_product_attention(split(self.q(x)), split(k), split(k)), k


def _compile(model, x, **options):
    start = report.mark()
    f = compile_irc(model, **options)
    torch.testing.assert_close(f(x), model(x), **TOL)
    torch.testing.assert_close(f(x + 1), model(x + 1), **TOL)
    (g,) = report.reports_since(start).graphs
    return g


@pytest.mark.parametrize("seq", [64, 67], ids=["s64", "s67"])
def test_bias_of_a_product_read_by_library_calls_joins_onednn(seq):
    """2 x 8 x seq x 128 x 128 flops a projection: above the small-product cut, so oneDNN's prepacked weight (option
    prepack); seq 67 is a prime (the rule and the call do not depend on it)."""
    model, x = Attention().eval(), torch.randn(8, seq, 128)
    with torch.no_grad():
        g = _compile(model, x, prepack=True)
    problems = {p: path for p, path in g.extern_paths.items() if "addmm" in p or "tn.mm" in p}
    if ONEDNN:
        assert problems == {f"tn.addmm {8 * seq}x128 @ 128x128 float32, constant weight": "mkldnn_packed"}, problems
    else:
        assert all(p.startswith("tn.mm") for p in problems), problems


def test_a_bias_with_more_work_and_training_products_keep_their_kernels():
    """A relu after the bias (oneDNN's relu maps NaN to 0, eager's keeps it) stays a kernel; a training forward's
    weight changes every step, so its product takes its bias in the call only where it runs oneDNN's plain path
    (externs.onednn_outruns_mkl), else it is MKL's mm and its bias a kernel."""
    lin = torch.nn.Linear(128, 128)
    relu = lambda x: torch.relu(lin(x))  # noqa: E731
    x = torch.randn(512, 128)
    x[0, 0] = float("nan")
    with torch.no_grad():
        g = _compile(relu, x)
    assert not any("addmm" in p for p in g.extern_paths), g.extern_paths
    start = report.mark()
    f = compile_irc(Attention())
    xs = torch.randn(8, 64, 128, requires_grad=True)
    out, k = f(xs)
    (out.sum() + k.sum()).backward()
    folded = any("addmm" in p for g in report.reports_since(start).graphs for p in g.extern_paths)
    assert folded == (externs.onednn_available() and externs.onednn_outruns_mkl())


class FeedForward(torch.nn.Module):
    """A transformer's feed-forward, down(gelu(up(x))): gelu exact (BERT's), tanh-approximated, or written out as
    GPT-2's NewGELUActivation."""

    def __init__(self, act: str, d=128, ff=512):
        super().__init__()
        self.up, self.down, self.act = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d), act

    def forward(self, x):
        h = self.up(x)
        if self.act == "gpt2":
            h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        else:
            h = F.gelu(h, approximate="tanh" if self.act == "gelu_tanh" else "none")
        return self.down(h)


@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "gpt2"])
def test_a_gelu_after_the_bias_joins_onednn(act):
    """The feed-forward's gelu(x @ W1^T + b1) over (batch, seq) rows (8 x 67: the nest splits the product's 536 rows)
    runs as one oneDNN call (its weight prepacked: option prepack) with the gelu as its epilogue, NaN kept as eager keeps it; with the down projection's
    bias folded too, the one kernel left gathers the (8, 67, 128) input into the product's 536 rows."""
    model, x = FeedForward(act).eval(), torch.randn(8, 67, 128)
    x[0, 0, 0] = float("nan")
    with torch.no_grad():
        g = _compile(model, x, prepack=True)
    if not ONEDNN:
        assert not any("addmm" in p for p in g.extern_paths), g.extern_paths
        return
    assert g.extern_paths == {
        "tn.addmm 536x128 @ 128x512 float32, constant weight": "mkldnn_packed",
        "tn.addmm 536x512 @ 512x128 float32, constant weight": "mkldnn_packed",
    }, g.extern_paths
    assert g.fused_kernels == 1


def test_a_nest_that_is_almost_a_gelu_keeps_its_kernel():
    """0.5 x (1 + tanh(c (x + 0.044715 x^3))) with another c is not tn.addmm's gelu_tanh: it stays a kernel."""
    lin = torch.nn.Linear(128, 512)
    almost = lambda x: 0.5 * lin(x) * (1.0 + torch.tanh(0.8 * (lin(x) + 0.044715 * torch.pow(lin(x), 3.0))))  # noqa: E731
    with torch.no_grad():
        g = _compile(almost, torch.randn(536, 128))
    assert g.fused_kernels == 1
    assert not any(p.startswith("tn.addmm") for p in g.extern_paths), g.extern_paths


@pytest.mark.parametrize("epilogue", ["gelu", "gelu_tanh"])
def test_the_reference_semantics_of_an_addmm_epilogue(epilogue):
    """tn.addmm's meaning on the reference target (irc-opt's interpreter): gelu(a @ b + bias), exact or tanh."""
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.utils.test_value import create_ssa_value

    from irc.dialects import tensor as tn
    from irc.dialects.semantics.nn import NN_SEMANTICS

    a, b, bias = (create_ssa_value(TensorType(f32, s)) for s in ((4, 8), (8, 16), (16,)))
    op = tn.AddmmOp(a, b, bias, TensorType(f32, (4, 16)), epilogue)
    op.verify()
    x, w, c = torch.randn(4, 8), torch.randn(8, 16), torch.randn(16)
    want = F.gelu(torch.addmm(c, x, w), approximate="tanh" if epilogue == "gelu_tanh" else "none")
    torch.testing.assert_close(NN_SEMANTICS[tn.AddmmOp](op, x, w, c), want)


def test_the_rows_of_a_split_product_are_read_only_by_the_flattening_map():
    """fold-bias's row check: over (4, 3, 16), (d0 * 3 + d1, d2) reads the product's 12 rows in order; a transpose,
    and a map with a mod that agrees with it at the origin and at each unit step, do not."""
    from xdsl.ir.affine import AffineExpr, AffineMap

    from irc.lowering.fold_bias import _reads_rows

    d0, d1, d2 = (AffineExpr.dimension(i) for i in range(3))
    space = [4, 3, 16]
    assert _reads_rows(AffineMap(3, 0, (d0 * 3 + d1, d2)), space)
    assert not _reads_rows(AffineMap(3, 0, (d2, d0 * 3 + d1)), space)
    assert not _reads_rows(AffineMap(3, 0, (d0 * 3 + d1 % 2, d2)), space)
