"""orient-products: a matrix product the target runs faster as its transpose is computed as one, in place.

C = A @ B and C^T = B^T @ A^T hold the same numbers; a BLAS call that writes C column-major runs the second
problem, and a BLAS library may run one of the two much faster than the other on the same operands (MKL, and
oneDNN's AMX kernel in bf16: x @ W^T with few rows; targets/cpu/libs/mm_rules.py computes_transposed holds the rule,
docs/cpu-target.md its measurements). The target's rule says which products (rules.Rules.transposed_products);
each one becomes

    %c = tn.mm %a, %bt : MxK, KxN              %at = loop.view %a[(d0, d1) -> (d1, d0)] : MxK -> KxM
                                         ->    %ct = tn.mm %b, %at : NxK, KxM -> NxM
                                               %c = loop.view %ct[(d0, d1) -> (d1, d0)] : NxM -> MxN

where %bt = loop.view %b transposed (its view of a view folds to %b). Only products whose result every
reader loads inside a nest or the graph returns are changed: those kernels read the column-major result
through their load maps (simplify-loop folds the view into them), and bufferize copies a returned view into a
row-major output, eager's layout (one pass: the rule weighs it); an extern reading the result would need that
layout back too. Runs after fuse-loops, so fusion sees the product as it was. Without a
target (IR that records no plan) it changes nothing unless asked: `-p 'orient-products{every=true}'`.
"""

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN

from .product_pass import ProductPass

_SWAP = AffineMap(2, 0, (AffineExpr.dimension(1), AffineExpr.dimension(0)))


def _transposed(v: SSAValue, new: list[Operation]) -> SSAValue:
    """v^T: the source of a transposing view, else a new transposing view of v (appended to `new`)."""
    if isinstance(v.owner, loop.ViewOp) and v.owner.map.data == _SWAP:
        return v.owner.source
    m, n = v.type.get_shape()
    new.append(view := loop.ViewOp(v, _SWAP, TensorType(v.type.get_element_type(), [n, m])))
    return view.result


def _eligible(op: tn.MmOp) -> bool:
    """Static sizes (a view of a dynamic one would need its sizes as operands), a result only kernels load or the
    graph returns (bufferize then copies the transposed view into a row-major output, as it does every returned
    view: one pass over the result)."""
    uses = list(op.result.uses)
    static = DYN not in (*op.lhs.type.get_shape(), *op.rhs.type.get_shape())
    return static and bool(uses) and all(isinstance(u.operation, loop.LoadOp | func.ReturnOp) for u in uses)


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
class OrientProductsPass(ProductPass):
    """Products the target's rule picks are computed as their transpose (every=true: each one only kernels read)."""

    name = "orient-products"

    def rewrite(self, mm: tn.MmOp, picks) -> None:
        if _eligible(mm) and picks(mm):
            orient(mm)


__all__ = ["OrientProductsPass", "orient"]
