"""Pairwise distances written in ops irc imports: cdist's and pdist's kernels and their backwards compile natively
instead of running as eager calls.

Each follows ATen's CPU kernels (Distance.cpp, DistanceOpsKernel.cpp): the same norm per p (0: a count of the
nonzero differences, 1, 2, inf, and the general sum of |d|^p to the 1/p), the same choice of cdist's matmul path
for p = 2 (_euclidean_dist, when compute_mode asks for it or a side has more than 25 rows), and the same gradient
formulas, zero where a distance is zero. Sums over the feature dim go in another order than eager's vectorised
loops: the results agree to rounding, not bit for bit.
"""

import math

import torch

aten = torch.ops.aten


def _norm(diff, p: float):
    """The p-norm of `diff` over its last dim, as ATen's distance kernel computes it."""
    a = diff.abs()
    if p == 0:
        return (a != 0).to(diff.dtype).sum(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return a.pow(2).sum(-1).sqrt()
    if math.isinf(p):
        return a.amax(-1)
    return a.pow(p).sum(-1).pow(1.0 / p)


def _norm_grad(diff, grad, dist, p: float):
    """d dist / d x1 times grad, per difference element (ATen's backward of each norm): grad, dist broadcast over
    diff's last dim."""
    grad, dist = grad.unsqueeze(-1), dist.unsqueeze(-1)
    zero = torch.zeros((), dtype=diff.dtype, device=diff.device)
    if p == 1:
        return grad * diff.sign()
    if p < 2:
        grads = diff.sign() * diff.abs().pow(p - 1) * grad / dist.pow(p - 1)
        return torch.where((dist == 0) | ((diff == 0) & (p < 1)), zero, grads)
    if p == 2:
        return torch.where(dist == 0, zero, grad * diff / dist)
    if math.isinf(p):
        return grad * diff.sign() * (1 - torch.clamp(torch.ceil((diff.abs() - dist).abs()), max=1))
    return torch.where(dist == 0, zero, diff * diff.abs().pow(p - 2) * grad / dist.pow(p - 1))


def _broadcast_batch(x1, x2):
    batch = torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return x1.expand(*batch, *x1.shape[-2:]), x2.expand(*batch, *x2.shape[-2:])


def _euclidean_dist(x1, x2):
    """cdist's matmul path for p = 2 (ATen's _euclidean_dist): |a|^2 - 2 a.b + |b|^2 through one matmul."""
    x1_norm = x1.pow(2).sum(-1, keepdim=True)
    x2_norm = x2.pow(2).sum(-1, keepdim=True)
    x1_ = torch.cat([x1.mul(-2), x1_norm, torch.ones_like(x1_norm)], -1)
    x2_ = torch.cat([x2, torch.ones_like(x2_norm), x2_norm], -1)
    return x1_.matmul(x2_.mT).clamp_min(0).sqrt()


def _cdist_forward(x1, x2, p, compute_mode=None):
    r1, r2 = x1.shape[-2], x2.shape[-2]  # symbolic row counts: the path choice guards on them, as cdist's own
    x1, x2 = _broadcast_batch(x1, x2)
    mode = compute_mode or 0
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean_dist(x1, x2)
    return _norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)


def _cdist_backward(grad, x1, x2, p, cdist):
    """The gradient for x1 over the broadcast batch (autograd sums it back to x1's shape)."""
    x1, x2 = _broadcast_batch(x1, x2)
    if p == 0 or x1.numel() == 0 or x2.numel() == 0:
        return torch.zeros_like(x1)
    return _norm_grad(x1.unsqueeze(-2) - x2.unsqueeze(-3), grad, cdist, p).sum(-2)


def _pairs(n: int, device):
    """The pairs i < j in row-major order, as pdist lists its distances."""
    i, j = torch.triu_indices(n, n, 1, device=device)
    return i, j


def _pdist_forward(self, p=2):
    n = self.shape[0]
    i, j = _pairs(n, self.device)
    return _norm(self.index_select(0, i) - self.index_select(0, j), p)


def _pdist_backward(grad, self, p, pdist):
    n = self.shape[0]
    if p == 0 or n <= 1:
        return torch.zeros_like(self)
    i, j = _pairs(n, self.device)
    each = _norm_grad(self.index_select(0, i) - self.index_select(0, j), grad, pdist, p)
    return torch.zeros_like(self).index_add(0, i, each).index_add(0, j, -each)


COMPOSITES = {
    aten._cdist_forward.default: _cdist_forward,
    aten._cdist_backward.default: _cdist_backward,
    aten._pdist_forward.default: _pdist_forward,
    aten._pdist_backward.default: _pdist_backward,
}
