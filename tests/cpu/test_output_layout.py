"""output-layout (lowering/output_layout.py): a result eager returns in a permuted dense layout is computed
in that layout by the program itself, not row-major and then copied by the runtime."""

import pytest
import torch

import irc
from irc import report
from irc.lowering.output_layout import memory_order
from irc.targets import runtime


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


@pytest.mark.parametrize(
    "sizes, strides, want",
    [
        ((3, 5), (5, 1), None),  # row-major: nothing to do
        ((3, 5), (1, 3), (1, 0)),  # column-major
        ((2, 3, 4, 5), (60, 1, 15, 3), (0, 2, 3, 1)),  # channels-last
        ((3, 5), (10, 2), None),  # not dense
        ((3, 5), (0, 1), None),  # broadcast
        ((1, 5), (1, 1), None),  # a size-1 dim: any stride is eager's choice
        ((2, 2), ("2*s1", 2), None),  # a symbolic stride (a slice of a dynamic base): no static layout
    ],
)
def test_memory_order(sizes, strides, want):
    assert memory_order(sizes, strides) == want


CASES = {
    "transposed": (lambda x: x.t() * 2 + 1, lambda: (randn(67, 133),)),
    "channels-last": (lambda x: torch.relu(x) * 3, lambda: (randn(2, 5, 7, 3).to(memory_format=torch.channels_last),)),
    "permuted-3d": (lambda x, y: x.permute(2, 0, 1) - y, lambda: (randn(4, 6, 9), randn(4, 1))),
    "two-outputs": (lambda x: (x.t().exp(), x.sum(0)), lambda: (randn(33, 17),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_results_come_out_in_eager_layout_without_a_copy(monkeypatch, case):
    seen = []
    real = runtime._restride

    def spy(t, spec):
        seen.append((t.stride(), spec.strides))
        return real(t, spec)

    monkeypatch.setattr(runtime, "_restride", spy)
    fn, make = CASES[case]
    inputs = make()
    start = report.mark()
    got = torch.compile(fn, backend=irc.backend, options={"strict": True})(*inputs)
    (g,) = report.reports_since(start).graphs
    assert g.target == "cpu" and not g.target_fallbacks, (g.target, g.target_fallbacks)
    want = fn(*inputs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
        assert g.stride() == w.stride()
    # what the program returned already had eager's strides: the runtime copied nothing
    assert all(have == wanted for have, wanted in seen if wanted is not None), seen
