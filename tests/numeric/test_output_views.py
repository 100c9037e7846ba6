"""Outputs that are views of other outputs share their memory, as in eager (dynamo/aliases.py output_views).

AOT autograd hands such outputs over as the compiled graph returns them, so a copy broke eager's aliasing (a write
to one output did not show in its view) and cost a pass over memory: a training forward returns each ReLU's output
and its detach for the backward."""

import copy

import pytest
import torch

import irc


def _views(x):
    y = torch.relu(x) * 2
    return y, y.detach(), y.view(-1), y.t(), y


def _shares(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _like_eager(got, want) -> None:
    """Every output with eager's values and layout (sizes, strides, storage offset)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
        assert (g.shape, g.stride(), g.storage_offset()) == (w.shape, w.stride(), w.storage_offset())


@pytest.mark.parametrize("shape", [(4, 5), (1, 7), (13, 1)])
def test_views_of_an_output_share_its_memory_as_in_eager(shape):
    x = torch.randn(shape)
    want = _views(x)
    got = torch.compile(_views, backend=irc.backend)(x)
    _like_eager(got, want)
    assert all(_shares(got[0], g) for g in got[1:])
    assert got[4] is got[0]  # returned twice: the same tensor, as eager returns it
    got[0].add_(1)  # a write through one output shows in every view of it, as in eager
    want[0].add_(1)
    for w, g in zip(want, got):
        torch.testing.assert_close(g, w)


def test_a_view_of_a_view_output_and_of_a_strided_input():
    def fn(x):
        y = x.exp()
        a = y.t()
        return a.unsqueeze(0), y, a

    x = torch.randn(6, 8)[:, ::2]  # a non-contiguous input
    want, got = fn(x), torch.compile(fn, backend=irc.backend)(x)
    _like_eager(got, want)
    assert _shares(got[0], got[1]) and _shares(got[2], got[1])


def test_views_with_dynamic_sizes():
    def fn(x):
        y = x.sigmoid()
        return y, y.reshape(x.shape[0] * x.shape[1]), y[1:]

    f = torch.compile(fn, backend=irc.backend, dynamic=True)
    for shape in [(3, 5), (7, 4), (2, 11)]:
        x = torch.randn(shape)
        want, got = fn(x), f(x)
        _like_eager(got, want)
        assert _shares(got[0], got[1]) and _shares(got[0], got[2])


def test_a_returned_detach_costs_no_copy_kernel():
    def fn(x):
        y = torch.relu(x) * 2
        return y, y.detach()

    (g,) = irc.explain(fn, torch.randn(32, 64)).graphs
    assert g.kernels == 1, str(g)  # the fused relu-mul only: no kernel copying y for its detach


def test_training_step_through_returned_detaches_matches_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))
    twin = copy.deepcopy(model)
    x = torch.randn(8, 16)
    compiled = torch.compile(twin, backend=irc.backend)
    for _ in range(2):
        model(x).square().sum().backward()
        compiled(x).square().sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(q.grad, p.grad)


def _two_chains(x):
    y = x.exp() * 2  # not returned itself: each output is a view of it through its own chain
    return y.view(2, 3, 4).transpose(0, 1), y.view(24), x.sigmoid().view(4, 6), x.sigmoid().view(24)


def test_views_of_one_value_through_different_chains_share_its_memory():
    """Two outputs over one dense span of memory (BERT's forward returns its attention output and the head merge's
    `.view(2048, 256)` of it; or `x.view(n, d)` once per projection) are one memory in eager: the second is taken
    from the first by as_strided, not copied. Outputs over the same values computed twice stay apart, as in eager."""
    x = torch.randn(6, 4)
    want = _two_chains(x)
    (g,) = irc.explain(_two_chains, x).graphs
    assert g.kernels == 2, str(g)  # exp-mul and sigmoid (computed once, CSE), no copy kernel for a second view
    got = torch.compile(_two_chains, backend=irc.backend)(x)
    _like_eager(got, want)
    assert _shares(got[0], got[1]) and not _shares(got[2], got[3])
    got[0].mul_(3)
    want[0].mul_(3)
    for w, g in zip(want, got):
        torch.testing.assert_close(g, w)
