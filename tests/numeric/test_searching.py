"""searchsorted, bucketize and isin compile natively (frontend/searching.py) and give eager's answers exactly: both
sides, sorters, N-d sequences, NaN and infinities, duplicates, unsorted sequences (eager's binary search, not a count),
sizes around powers of two, empty sequences, scalars, non-contiguous and dynamic inputs. The search is one fused
kernel with no bounds check (its positions are clamped: lowering/index_range.py)."""

import pytest
import torch

import irc
from tests.conftest import compile_irc


def same(compiled, fn, *args):
    got, want = compiled(*args), fn(*args)
    assert got.dtype == want.dtype and torch.equal(got, want), f"{got} != eager {want}"


def values_for(seq: torch.Tensor, shape) -> torch.Tensor:
    """Values that hit the sequence's elements exactly, fall between and outside them, and NaN and infinities."""
    torch.manual_seed(0)
    pool = torch.cat([seq.reshape(-1), torch.randn(16) * 3, torch.tensor([float("nan"), float("inf"), -float("inf")])])
    return pool[torch.randint(0, pool.numel(), shape)]


@pytest.mark.parametrize("m", [1, 2, 7, 8, 9, 16, 33])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_sizes_and_sides(m, right):
    seq = torch.randn(m).sort().values
    seq[m // 2 :] = seq[m // 2]  # duplicates: left and right answers differ
    fn = lambda s, v: torch.searchsorted(s, v, right=right)  # noqa: E731
    same(compile_irc(fn), fn, seq, values_for(seq, (5, 6)))


def test_side_sorter_and_out_int32():
    torch.manual_seed(1)
    seq = torch.randn(12)
    sorter = seq.argsort()
    fn = lambda s, v, o: torch.searchsorted(s, v, side="right", sorter=o, out_int32=True)  # noqa: E731
    same(compile_irc(fn), fn, seq, values_for(seq, (4, 5)), sorter)


def test_rows_of_an_nd_sequence():
    seq = torch.randn(3, 2, 10).sort(-1).values
    fn = lambda s, v: torch.searchsorted(s, v)  # noqa: E731
    same(compile_irc(fn), fn, seq, values_for(seq, (3, 2, 7)))


def test_unsorted_sequences_and_nan_give_eagers_binary_search():
    torch.manual_seed(2)
    seq = torch.randn(11)
    seq[[2, 7]] = float("nan")
    fn = lambda s, v: torch.searchsorted(s, v) + torch.searchsorted(s, v, right=True) * 100  # noqa: E731
    same(compile_irc(fn), fn, seq, values_for(seq, (40,)))


def test_integer_sequence_and_mixed_dtypes():
    seq = torch.tensor([1, 3, 3, 5, 9])
    fn = lambda s, v: torch.searchsorted(s, v)  # noqa: E731
    same(compile_irc(fn), fn, seq, torch.arange(-1, 11))
    same(compile_irc(fn), fn, seq, torch.tensor([2.5, 3.0, 9.5]))


def test_empty_sequence_and_scalar_value():
    fn = lambda s, v: torch.searchsorted(s, v)  # noqa: E731
    same(compile_irc(fn), fn, torch.zeros(0), torch.randn(4))
    seq = torch.arange(6.0)
    scalar = lambda s: torch.searchsorted(s, 2.5)  # noqa: E731
    same(compile_irc(scalar), scalar, seq)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize(right):
    bounds = torch.tensor([-1.0, 0.0, 0.0, 2.5, 4.0])
    fn = lambda x, b: torch.bucketize(x, b, right=right)  # noqa: E731
    same(compile_irc(fn), fn, values_for(bounds, (3, 8)).t(), bounds)  # a transposed (non-contiguous) input
    same(compile_irc(fn), fn, torch.tensor(0.0), bounds)  # 0-d


def test_dynamic_sizes():
    """Values of a dynamic size against a static sequence: one native graph serves every size."""
    from irc import report

    bounds = torch.linspace(-2, 2, 9)
    fn = lambda x, b: torch.bucketize(x, b) * 2  # noqa: E731
    torch._dynamo.reset()
    start = report.mark()
    compiled = compile_irc(fn)
    for n in (5, 17, 33):
        x = torch.randn(n, 3)
        torch._dynamo.mark_dynamic(x, 0)
        same(compiled, fn, x, bounds)
    rep = report.reports_since(start)
    assert len(rep.graphs) == 1 and rep.native, str(rep)


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    torch.manual_seed(3)
    x = torch.randint(0, 12, (7, 5)).float()
    x[0, 0] = float("nan")
    test = torch.tensor([1.0, 4.0, float("nan"), 11.0, 4.0])
    fn = lambda x, t: torch.isin(x, t, invert=invert)  # noqa: E731
    same(compile_irc(fn), fn, x, test)
    same(compile_irc(fn), fn, x, torch.zeros(0))
    same(compile_irc(fn), fn, x.long(), test)  # integers against floats: eager promotes


def test_isin_past_the_limit_keeps_eagers_op():
    from irc.frontend.searching import ISIN_LIMIT

    x, test = torch.randint(0, 5000, (50,)), torch.arange(0, 2 * (ISIN_LIMIT + 1), 2)
    fn = lambda x, t: torch.isin(x, t)  # noqa: E731
    same(compile_irc(fn), fn, x, test)
    rep = irc.explain(fn, x, test)
    assert any("aten" in name for g in rep.graphs for name, _ in g.fallbacks), str(rep)


def test_a_search_is_one_kernel_without_bounds_checks():
    seq, v = torch.randn(100).sort().values, torch.randn(64, 8)
    rep = irc.explain(lambda s, v: torch.searchsorted(s, v, right=True), seq, v, options={"strict": True})
    assert rep.native, str(rep)
    (g,) = rep.graphs
    assert g.fused_kernels == 1 and not g.externs, str(rep)
