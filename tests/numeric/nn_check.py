"""The one check the nn numeric tests share: compile with irc (strict), compare outputs and input gradients with eager,
and require that every graph irc compiled on the way is native (no eager fallback, no eager graph)."""

import torch
from torch.utils._pytree import tree_flatten

from irc import report
from tests.conftest import compile_irc

F32 = dict(atol=1e-5, rtol=1e-5)


def _copy(x):
    if not isinstance(x, torch.Tensor):
        return x
    return x.detach().clone().requires_grad_(x.requires_grad)


def _outputs(out) -> list[torch.Tensor]:
    return [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor) and o.dtype.is_floating_point]


def _backward(out, seed: int) -> None:
    outs = [o for o in _outputs(out) if o.requires_grad]
    if outs:
        g = torch.Generator().manual_seed(seed)
        loss = sum((o * torch.randn(o.shape, generator=g)).sum() for o in outs)
        loss.backward()


def check(fn, *inputs, compiled=None, dynamic=None, tol=F32):
    """fn(*inputs) through irc equals eager, and so do the gradients of every input that requires grad.
    Returns the compiled function (to call again) and the inputs irc and eager saw (to compare mutations)."""
    start = report.mark()
    compiled = compiled or compile_irc(fn, dynamic=dynamic)
    ours, theirs = [_copy(x) for x in inputs], [_copy(x) for x in inputs]
    out, ref = compiled(*ours), fn(*theirs)
    torch.testing.assert_close(out, ref, **tol)
    _backward(out, 0)
    _backward(ref, 0)
    for a, b in zip(ours, theirs):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            torch.testing.assert_close(a.grad, b.grad, **tol)
    rep = report.reports_since(start)
    assert not rep.fallbacks and all(g.native for g in rep.graphs), str(rep)
    return compiled, ours, theirs


def leaf(*shape, transposed=False, grad=True, seed=0) -> torch.Tensor:
    """A random float32 leaf tensor; `transposed` gives it reversed strides (same shape, not contiguous)."""
    g = torch.Generator().manual_seed(seed)
    if transposed:
        x = torch.randn(*reversed(shape), generator=g).permute(*reversed(range(len(shape))))
    else:
        x = torch.randn(*shape, generator=g)
    return x.requires_grad_(grad)
