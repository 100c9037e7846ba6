"""orient-products: a matrix product the target runs faster as its transpose is computed as one, in place.

C = A @ B and C^T = B^T @ A^T hold the same numbers; a BLAS call that writes C column-major runs the second
problem. MKL's sgemm is up to 1.9x faster one way than the other on the same operands (a training
forward's x @ W^T with few rows: targets/cpu/mm_rules.computes_transposed holds the rule and its
measurements). The target says which products (`transposed(op)`); each one becomes

    %c = tn.mm %a, %bt : MxK, KxN              %at = loop.view %a[(d0, d1) -> (d1, d0)] : MxK -> KxM
                                         ->    %ct = tn.mm %b, %at : NxK, KxM -> NxM
                                               %c = loop.view %ct[(d0, d1) -> (d1, d0)] : NxM -> MxN

where %bt = loop.view %b transposed (its view of a view folds to %b). Only products whose result every
reader loads inside a nest are changed: those kernels read the column-major result through their load
maps (simplify-loop folds the view into them), where a returned or extern-read result would need
eager's row-major layout back. Runs after fuse-loops, so fusion sees the product as it was. Without a
target (irc-opt) it changes nothing unless asked: `-p 'orient-products{every=true}'`.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN

_SWAP = AffineMap(2, 0, (AffineExpr.dimension(1), AffineExpr.dimension(0)))


def _transposed(v: SSAValue, new: list[Operation]) -> SSAValue:
    """v^T: the source of a transposing view, else a new transposing view of v (appended to `new`)."""
    if isinstance(v.owner, loop.ViewOp) and v.owner.map.data == _SWAP:
        return v.owner.source
    m, n = v.type.get_shape()
    new.append(view := loop.ViewOp(v, _SWAP, TensorType(v.type.get_element_type(), [n, m])))
    return view.result


def _eligible(op: tn.MmOp) -> bool:
    """Static sizes (a view of a dynamic one would need its sizes as operands), a result only kernels load."""
    uses = list(op.result.uses)
    static = DYN not in (*op.lhs.type.get_shape(), *op.rhs.type.get_shape())
    return static and bool(uses) and all(isinstance(u.operation, loop.LoadOp) for u in uses)


def orient(op: tn.MmOp) -> None:
    """Replace `op` (a @ b) by the transposed view of b^T @ a^T."""
    new: list[Operation] = []
    rhs, lhs = _transposed(op.lhs, new), _transposed(op.rhs, new)
    m, n = op.result.type.get_shape()
    mm = tn.MmOp(lhs, rhs, TensorType(op.result.type.get_element_type(), [n, m]))
    view = loop.ViewOp(mm.result, _SWAP, op.result.type)
    op.parent_block().insert_ops_before([*new, mm, view], op)
    op.result.replace_all_uses_with(view.result)
    op.parent_block().erase_op(op)


@dataclass(frozen=True)
class OrientProductsPass(ModulePass):
    """Products the target's rule picks are computed as their transpose (every=true: each one only kernels read)."""

    name = "orient-products"
    every: bool = False  # irc-opt's way to see the rewrite without a target: the target's rule is not an option
    transposed: Callable[[Operation], bool] | None = field(default=None, compare=False, repr=False)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        picks = (lambda op: True) if self.every else self.transposed
        if picks is None:
            return
        for op in [op for op in module.walk() if isinstance(op, tn.MmOp)]:
            if _eligible(op) and picks(op):
                orient(op)


__all__ = ["OrientProductsPass", "orient"]
