"""Gradients through irc against eager's: the bugs the OpInfo gradient sweep (tests/opinfo/grad.py) found."""

import pytest
import torch

from irc import report
from tests.conftest import compile_irc


def _grads(fn, inputs, compiled=None):
    """(output, gradients of the float inputs) after backward of the output's sum."""
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    out = (compiled or fn)(*leaves)
    out.sum().backward()
    return out.detach(), [x.grad for x in leaves if x.requires_grad]


@pytest.mark.parametrize("eager_ops", [(), ("aten._efficientzerotensor",)], ids=["native", "eager-zeros"])
def test_sgn_gradient_is_zeros_with_storage(eager_ops):
    """sgn's backward is aten._efficientzerotensor: imported as zeros, or run eagerly, it must come back as a
    real tensor (an eager ZeroTensor has no storage: 'access the data pointer on an invalid python storage')."""
    x = torch.randn(5, 4)
    start = report.mark()
    compiled = compile_irc(torch.sgn, eager_ops=list(eager_ops))
    out, (grad,) = _grads(torch.sgn, [x], compiled)
    torch.testing.assert_close(out, torch.sgn(x))
    assert not grad._is_zerotensor()
    torch.testing.assert_close(grad, torch.zeros(5, 4))
    fallbacks = [t for g in report.reports_since(start).graphs for t, _ in g.fallbacks]
    assert fallbacks == (["aten::_efficientzerotensor.default"] if eager_ops else []), fallbacks


@pytest.mark.parametrize("reduce", ["prod", "mean", "sum", "amax"])
@pytest.mark.parametrize("include_self", [False, True])
def test_scatter_reduce_gradients(reduce, include_self):
    """scatter_reduce's backward fuses two outputs over one dying intermediate: plan-buffers put both in its
    slot (wrong gradients of the input for prod and mean)."""
    torch.manual_seed(0)
    x, src, index = torch.randn(5, 4), torch.randn(7, 4), torch.randint(0, 5, (7, 4))

    def fn(x, src, index):
        return x.scatter_reduce(0, index, src, reduce, include_self=include_self)

    want = _grads(fn, [x, src, index])
    got = _grads(fn, [x, src, index], compile_irc(fn))
    torch.testing.assert_close(got, want)
