"""The decomposition table AOT autograd applies before import: core aten, narrowed to what irc imports itself."""

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from .aten_table import load_all
from .attention_ops import DECOMPOSITIONS as ATTENTION_OPS

aten = torch.ops.aten

# Composite ops that are not in the core table but decompose into ops irc imports.
EXTRA = [
    aten.clamp_min,
    aten.clamp_max,
    aten.repeat_interleave.Tensor,
    aten.elu,
    aten.hardtanh,
    aten.leaky_relu,
    aten.linalg_vector_norm,
    aten.dist,
    aten.ldexp,
    aten.addmv,
]


def _fma(a, b, c):
    return a * b + c  # two roundings where fma has one: within float32 tolerance, as eager's CPU addcmul_ is


def decomposition_table() -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(EXTRA))
    table.update(ATTENTION_OPS)  # torch's fused attention ops (attention_ops.py)
    # Dynamo writes an optimizer's addcmul_/addcdiv_/lerp_ as inductor's prims.fma (registered when it does)
    if hasattr(torch.ops.prims, "fma"):
        table[torch.ops.prims.fma.default] = _fma
    importers = load_all()
    # An op irc imports natively stays whole: its own lowering beats the generic decomposition.
    return {op: fn for op, fn in table.items() if op not in importers}
