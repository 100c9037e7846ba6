"""Matrix products. mm and bmm are one tn op each; addmm and baddbmm add the scaled bias: beta * input + alpha * (a @ b)."""

import torch

from irc.dialects import tensor as tn

from ..aten_table import imports

aten = torch.ops.aten


def scaled_sum(b, node, product, bias, beta, alpha):
    """beta * bias + alpha * product, skipping unit scales; beta == 0 ignores bias entirely (NaNs included), as torch does."""
    dt = node.meta["val"].dtype
    if alpha != 1:
        product = b.add(tn.MulOp(product, b.tensor(alpha, dt)))
    if beta == 0:
        return b.expand(product, node.meta["val"].shape)
    if beta != 1:
        bias = b.add(tn.MulOp(bias, b.tensor(beta, dt)))
    return b.add(tn.AddOp(bias, product, b.result_type(node)))


@imports(aten.mm.default)
def import_mm(b, node, x, y):
    return b.add(tn.MmOp(x, y, b.result_type(node)))


@imports(aten.bmm.default)
def import_bmm(b, node, x, y):
    return b.add(tn.BmmOp(x, y, b.result_type(node)))


@imports(aten.addmm.default)
def import_addmm(b, node, bias, x, y, *, beta=1, alpha=1):
    return scaled_sum(b, node, b.add(tn.MmOp(x, y, b.result_type(node))), bias, beta, alpha)


@imports(aten.baddbmm.default)
def import_baddbmm(b, node, bias, x, y, *, beta=1, alpha=1):
    return scaled_sum(b, node, b.add(tn.BmmOp(x, y, b.result_type(node))), bias, beta, alpha)
