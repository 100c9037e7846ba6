"""simplify-tensor: algebraic clean-ups of tn ops (value semantics, so each rule holds whatever the layout)."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.ir.rules import apply_rules, rule


@rule(tn.ReshapeOp)
def fold_reshape_reshape(op):  # reshape(reshape(x)) -> reshape(x): row-major order is kept by both
    inner = op.input.owner
    if not isinstance(inner, tn.ReshapeOp):
        return None
    return tn.ReshapeOp(inner.input, op.result.type, list(op.sizes))


@rule(tn.ReshapeOp)
def fold_reshape_identity(op):  # reshape(x : T) : T -> x, for a static T
    return op.input if op.input.type == op.result.type and op.result.type.has_static_shape() else None


RULES = (fold_reshape_reshape, fold_reshape_identity)


@dataclass(frozen=True)
class SimplifyTensorPass(ModulePass):
    """Fold reshapes of reshapes and reshapes that change nothing."""

    name = "simplify-tensor"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, RULES)


__all__ = ["SimplifyTensorPass", "RULES"]
