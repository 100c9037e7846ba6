"""sort, topk, kthvalue, median, nanmedian and mode import as tn ops (dialects/tensor/sorting.py) that run torch's
kernels: values and indices equal eager's exactly (NaN, ties, both directions, keepdim, 0-d, odd sizes, non-contiguous
and dynamic inputs), gradients through them equal eager's, and no node runs as an eager fallback."""

import pytest
import torch

import irc
from tests.conftest import compile_irc

CASES = {
    "sort": lambda x: torch.sort(x, 1),
    "sort-descending-stable": lambda x: torch.sort(x, dim=0, descending=True, stable=True),
    "argsort": lambda x: torch.argsort(x, -1, descending=True),
    "msort": torch.msort,
    "topk": lambda x: torch.topk(x, 3),
    "topk-smallest-dim0": lambda x: torch.topk(x, 2, 0, largest=False),
    "kthvalue": lambda x: torch.kthvalue(x, 2, 1),
    "kthvalue-keepdim": lambda x: torch.kthvalue(x, 1, 0, keepdim=True),
    "median-dim": lambda x: torch.median(x, 1, keepdim=True),
    "median": torch.median,
    "nanmedian-dim": lambda x: torch.nanmedian(x, 0),
    "nanmedian": torch.nanmedian,
    "mode": lambda x: torch.mode(x.round(), 1),
    "quantile": lambda x: torch.quantile(x, torch.tensor([0.25, 0.5]), dim=1),
}


def data(shape=(5, 7), nan=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, shape, generator=g).float()  # ties everywhere
    if nan:
        x[1, 2] = x[-1, 0] = float("nan")
    return x


def same(got, want):
    if isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(got.nan_to_num(123.0), want.nan_to_num(123.0)), f"{got} != eager {want}"
        return
    assert not isinstance(got, torch.Tensor), f"one tensor, eager gives {len(want)} results"
    assert len(got) == len(want), f"{len(got)} results, eager gives {len(want)}"
    for g, w in zip(got, want):
        same(g, w)


@pytest.mark.parametrize("name", CASES)
def test_equals_eager_with_nan_and_ties(name):
    fn = CASES[name]
    x = data(nan=name != "quantile")
    same(compile_irc(fn)(x), fn(x))


@pytest.mark.parametrize("name", ["sort", "topk", "kthvalue", "median-dim", "mode"])
def test_non_contiguous_odd_sizes_and_zero_d(name):
    fn = CASES[name]
    x = data((7, 13), seed=1).t()  # 13 x 7, column-major
    same(compile_irc(fn)(x), fn(x))
    zero_d = {
        "sort": lambda x: torch.sort(x),
        "topk": lambda x: torch.topk(x, 1),
        "kthvalue": lambda x: torch.kthvalue(x, 1),
        "median-dim": lambda x: torch.median(x, 0),
        "mode": lambda x: torch.mode(x),
    }[name]
    s = torch.tensor(2.5)
    same(compile_irc(zero_d)(s), zero_d(s))


def test_dynamic_sizes_compile_once():
    from irc import report

    fn = lambda x: torch.sort(x, 1, descending=True)[0] + torch.topk(x, 2).values.sum(1, keepdim=True)  # noqa: E731
    torch._dynamo.reset()
    start = report.mark()
    compiled = compile_irc(fn)
    for rows, cols in ((3, 5), (6, 9), (11, 17)):
        x = data((rows, cols), seed=rows)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(x, 1)
        same(compiled(x), fn(x))
    rep = report.reports_since(start)
    assert len(rep.graphs) == 1 and rep.native, str(rep)


def test_gradients_equal_eagers():
    def loss(x):
        v, _ = torch.sort(x, 1)
        return (v * torch.arange(7.0)).sum() + torch.topk(x, 2).values.pow(2).sum() + torch.median(x, 0).values.sum()

    x = torch.randn(5, 7, requires_grad=True)
    y = x.detach().clone().requires_grad_(True)
    compile_irc(loss)(x).backward()
    loss(y).backward()
    torch.testing.assert_close(x.grad, y.grad)


def test_no_eager_fallback():
    rep = irc.explain(
        lambda x: (
            torch.sort(x, 1),
            torch.topk(x, 2),
            torch.kthvalue(x, 2),
            torch.median(x, 1),
            torch.nanmedian(x),
            torch.mode(x, 0),
        ),
        data(),
        options={"strict": True},
    )
    assert rep.native and not [f for g in rep.graphs for f in g.fallbacks], str(rep)
