"""End-to-end: small functions through torch.compile with irc match eager (contiguous, strided, broadcast, dynamic)."""

import torch

import irc
from tests.conftest import compile_irc


def test_add_relu_sum_matches_eager_and_is_native():
    fn = lambda x, y: torch.relu(x + y).sum(-1) * 2  # noqa: E731
    x, y = torch.randn(4, 33), torch.randn(33)
    rep = irc.explain(fn, x, y, options={"strict": True})
    assert rep.native, str(rep)
    torch.testing.assert_close(compile_irc(fn)(x, y), fn(x, y))


def test_non_contiguous_and_broadcast_inputs():
    fn = lambda x, y: (x * y - 1).exp().mean(0)  # noqa: E731
    x = torch.randn(7, 5).t()  # (5, 7), transposed strides
    y = torch.randn(1, 7)
    torch.testing.assert_close(compile_irc(fn)(x, y), fn(x, y))


def test_dynamic_dim_serves_every_size():
    fn = lambda x: torch.softmax(x, -1).view(-1) * x.shape[0]  # noqa: E731
    c = compile_irc(fn, dynamic=True)
    for n in (1, 3, 13, 64):
        x = torch.randn(n, 17)
        torch.testing.assert_close(c(x), fn(x))


def test_output_aliasing_an_input_is_a_fresh_tensor():
    fn = lambda x: (x.view(-1), x + 1)  # noqa: E731
    x = torch.randn(4, 4)
    a, b = compile_irc(fn)(x)
    torch.testing.assert_close(a, x.view(-1))
    torch.testing.assert_close(b, x + 1)


def test_output_strides_follow_eager():
    fn = lambda x: (x + 1).t()  # noqa: E731
    x = torch.randn(8, 3)
    out, ref = compile_irc(fn)(x), fn(x)
    assert out.stride() == ref.stride()
    torch.testing.assert_close(out, ref)


def test_a_call_of_fresh_results_hands_them_back_in_eagers_strides(monkeypatch):
    """A graph whose outputs are all results the target allocated (nothing to write back, view or alias) returns
    them by the plain path, in eager's strides, at static and dynamic sizes; a graph with an output that views its
    input, or one that is a transposed view of what the target computed, does not take it."""
    from irc.targets import runtime

    plain = []
    call = runtime.CompiledGraph.__call__

    def spy(self, args):
        plain.append(self.plain is not None)
        return call(self, args)

    monkeypatch.setattr(runtime.CompiledGraph, "__call__", spy)
    fn = lambda x: ((x + 1).relu(), x.sum(0) * 2)  # noqa: E731
    for dynamic in (False, True):
        c = compile_irc(fn, dynamic=dynamic)
        for n in (8, 13):
            x = torch.randn(n, 5)
            for out, ref in zip(c(x), fn(x), strict=True):
                assert out.stride() == ref.stride()
                torch.testing.assert_close(out, ref)
    assert plain and all(plain)
    plain.clear()
    compile_irc(lambda x: (x.view(-1), x + 1))(torch.randn(4, 4))
    out = compile_irc(lambda x: (x + 1).t())(torch.randn(8, 3))
    assert plain == [False, False] and out.stride() == (1, 3)
