"""Ops AOT autograd orders with an effect token: with_effects(token, op, *args). An op in EFFECTFUL imports as its
typed op with effects (linalg's error check: tn.check_linalg); any other, or one named in eager_ops or refused by its
importer, runs as an eager call in its place (fx_import). Neither is Pure, so neither is dead code and both keep their
place among the ops with effects: that order is what the token stood for, so the token itself only passes through
(an input the runtime fills, returned unchanged)."""

import torch
from torch._ops import OpOverload

from irc.dialects.tensor.fallback import overload_name
from irc.ir.types import UnsupportedDtype

from .aten_table import IMPORTERS, Unsupported

# The ops whose importer builds an op with effects (never a Pure one, which could be erased or reordered).
EFFECTFUL: frozenset[OpOverload] = frozenset({torch.ops.aten._linalg_check_errors.default})


def import_effect(g, node: torch.fx.Node) -> tuple | None:
    """The results of with_effects' op (not its token) as a typed op built by `g` (the GraphImporter), or None:
    the op runs eagerly."""
    _, op, *args = node.args
    if op not in EFFECTFUL or {overload_name(op), op._schema.name} & g.eager_ops:
        return None
    mark = g.b.checkpoint()
    try:
        out = IMPORTERS[op](g.b, node, *g.map_args(tuple(args)), **g.map_args(node.kwargs))
    except (Unsupported, UnsupportedDtype):
        g.b.rollback(mark)
        return None
    g.imported[overload_name(op)] += 1
    return tuple(out)
