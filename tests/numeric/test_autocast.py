"""Mixed precision: graphs captured under torch.autocast("cpu", dtype=bfloat16 or float16) compile with irc
(strict: no irc error hidden by an eager fallback) and match eager within the narrow type's tolerance,
in inference and in a training step (loss and every gradient).

Two irc bugs these found: addmm/baddbmm in bf16/f16 rounded the product before adding the bias (eager
rounds once: frontend/importers/linalg.py), and a nest narrowing f32 -> bf16 -> f32 was taken for a copy
and replaced by a view, dropping the rounding (lowering/fusion/legality.copy_source).
"""

import copy

import pytest
import torch
import torch.nn.functional as F

from irc import report
from irc.bench import models as M
from tests.conftest import compile_irc

# Per narrow dtype: a few units in the last place of the result (bf16 has 8 bits of mantissa, f16 11).
TOL = {torch.bfloat16: {"rtol": 2e-2, "atol": 2e-2}, torch.float16: {"rtol": 2e-3, "atol": 2e-3}}
DTYPES = pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])

MODELS = {
    "mlp": lambda: (M.MLP(64, 128, 10), (torch.randn(8, 64),)),
    "convnet": lambda: (M.ConvNet(size=8), (torch.randn(2, 3, 8, 8),)),
    "transformer": lambda: (
        M.MiniTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16, dropout=0.0),
        (torch.randint(0, 100, (2, 16)),),
    ),
}


def build(name, train: bool):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    if name == "convnet":  # non-trivial running statistics, so eval-mode BatchNorm is not an identity
        with torch.no_grad():
            for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
                bn.running_mean.uniform_(-0.1, 0.1)
                bn.running_var.uniform_(0.5, 1.5)
    return model.train(train), inputs


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_inference_under_autocast_matches_eager(name, dtype):
    model, inputs = build(name, train=False)
    mine = copy.deepcopy(model)
    compiled = compile_irc(mine)
    mark = report.mark()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        want = model(*inputs)
        got = compiled(*inputs)
    assert want.dtype == dtype and got.dtype == dtype  # autocast ran the final Linear in the narrow type
    scale = want.float().abs().max().item()
    torch.testing.assert_close(got.float(), want.float(), rtol=TOL[dtype]["rtol"], atol=TOL[dtype]["atol"] * scale)
    rep = report.reports_since(mark)
    assert rep.native and all(g.target == "cpu" for g in rep.graphs), str(rep)


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_training_step_under_autocast_matches_eager(name, dtype):
    """Forward and loss under autocast, backward outside it (the usual recipe); float32 parameters get
    gradients computed through the narrow type. A gradient is compared on the scale of the largest
    gradient of the model: a conv bias before train-mode BatchNorm has a gradient that is rounding noise."""
    model, inputs = build(name, train=True)
    mine = copy.deepcopy(model)
    target = torch.randint(0, 10, (inputs[0].shape[0],), generator=torch.Generator().manual_seed(1))

    def step(m, fn):
        with torch.autocast("cpu", dtype=dtype):
            loss = fn(*inputs)
        loss.backward()
        return loss.detach(), {n: p.grad for n, p in m.named_parameters()}

    want_loss, want = step(model, lambda *a: F.cross_entropy(model(*a), target))
    got_loss, got = step(mine, compile_irc(lambda *a: F.cross_entropy(mine(*a), target)))
    tol = TOL[dtype]
    torch.testing.assert_close(got_loss, want_loss, rtol=tol["rtol"], atol=tol["atol"])
    scale = max(g.abs().max().item() for g in want.values())
    assert set(got) == set(want) and all(g is not None for g in got.values())
    for n in want:
        torch.testing.assert_close(
            got[n], want[n], rtol=tol["rtol"], atol=tol["atol"] * scale, msg=lambda m: f"grad {n}: {m}"
        )
    if name == "convnet":  # train-mode BatchNorm statistics move the same way
        for (n, b), (_, b2) in zip(model.named_buffers(), mine.named_buffers()):
            torch.testing.assert_close(
                b2.float(), b.float(), rtol=tol["rtol"], atol=tol["atol"], msg=lambda m: f"buffer {n}: {m}"
            )


@DTYPES
def test_addmm_rounds_once_like_eager(dtype):
    """bias + a @ b in the narrow type is one rounding of the float32 result, as eager's is: products of narrow
    values are exact in f32, so the only freedom is the f32 summation order (eager's kernel and the library irc
    calls sum in different orders). Every element equals eager's, except where the exact value lies so close to
    a rounding tie that the f32 sums' last bits decide; never the value rounded twice (product, then sum)."""
    g = torch.Generator().manual_seed(0)
    a, w, bias = (torch.randn(*s, generator=g).to(dtype) for s in ((8, 64), (64, 32), (32,)))
    fn = lambda bias, a, w: torch.addmm(bias, a, w)  # noqa: E731
    got, want = compile_irc(fn)(bias, a, w), fn(bias, a, w)
    exact = bias.double() + a.double() @ w.double()
    twice = (bias.float() + (a.float() @ w.float()).to(dtype).float()).to(dtype)  # rounded after the product too
    nearest = exact.to(dtype)
    other = torch.nextafter(nearest, torch.where(exact > nearest.double(), torch.inf, -torch.inf).to(dtype))
    tie = (nearest.double() + other.double()) / 2
    summed = bias.double().abs() + a.double().abs() @ w.double().abs()
    near_tie = (exact - tie).abs() <= a.shape[1] * torch.finfo(
        torch.float32
    ).eps * summed  # f32 summation's error bound
    differ = got != want
    assert not (differ & ~near_tie).any(), f"{int((differ & ~near_tie).sum())} elements off where no tie is near"
    assert ((got == nearest) | (near_tie & (got == other))).all()  # one rounding of (nearly) the exact value
    rounded_twice = twice != nearest
    assert (rounded_twice & ~near_tie).any()  # the test tells one rounding from two


def test_narrowing_then_widening_is_not_a_copy():
    """x.to(bf16).to(f32) rounds: irc must not turn the pair into a view of x (here, the matrix an mm reads)."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(8, 64, generator=g), torch.randn(64, 16, generator=g)
    fn = lambda x, w: x.to(torch.bfloat16).to(torch.float32) @ w  # noqa: E731
    torch.testing.assert_close(compile_irc(fn)(x, w), fn(x, w))
