"""The range every element of an integer tensor provably lies in, read off the tn ops that made it: a gather whose
index tensor lies inside its source needs no bounds check (a clamped index, an iota, a pick between such).

Lowering asks before it lowers the index's producers (tensor-to-loop walks the block from its end), so the
producers are still tn ops. Anything not understood is unbounded: the check stays.
"""

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType
from xdsl.ir import SSAValue

from irc.dialects import tensor as tn
from irc.dialects.tensor.base import element, shape

DEPTH = 32  # producers followed back from an index: a longer chain is unbounded (keeps the question cheap)

Range = tuple[int | None, int | None]  # (least, most); None: unbounded on that side

_VIEWS = (tn.ExpandOp, tn.ReshapeOp, tn.PermuteOp, tn.SqueezeOp, tn.UnsqueezeOp, tn.SliceOp, tn.SelectOp, tn.FlipOp)


def _lo(*xs):
    return None if any(x is None for x in xs) else min(xs)


def _hi(*xs):
    return None if any(x is None for x in xs) else max(xs)


def _constant(op: tn.ConstantOp) -> Range:
    value = op.value
    if not isinstance(value, DenseIntOrFPElementsAttr) or not isinstance(element(op.result), IntegerType):
        return None, None
    values = [int(v) for v in value.get_values()]
    return (min(values), max(values)) if values else (None, None)


def element_range(v: SSAValue, depth: int = DEPTH) -> Range:
    """(least, most) over v's elements, each None where no bound is proven."""
    op = v.owner
    if depth == 0 or not isinstance(element(v), IntegerType):
        return None, None
    if isinstance(op, tn.ConstantOp):
        return _constant(op)
    if isinstance(op, tn.IotaOp):
        n = shape(op.result)[0]
        return (0, n - 1) if isinstance(n, int) and n > 0 else (0, None)
    widened = isinstance(op, tn.ConvertOp) and isinstance(element(op.input), IntegerType) and \
        element(op.input).bitwidth <= element(v).bitwidth
    if isinstance(op, _VIEWS) or widened:
        return element_range(op.input, depth - 1)
    if isinstance(op, (tn.MinimumOp, tn.MaximumOp)):
        (a_lo, a_hi), (b_lo, b_hi) = element_range(op.lhs, depth - 1), element_range(op.rhs, depth - 1)
        if isinstance(op, tn.MinimumOp):  # at most the smaller bound either side proves
            return _lo(a_lo, b_lo), min((x for x in (a_hi, b_hi) if x is not None), default=None)
        return max((x for x in (a_lo, b_lo) if x is not None), default=None), _hi(a_hi, b_hi)
    if isinstance(op, tn.WhereOp):
        (a_lo, a_hi), (b_lo, b_hi) = element_range(op.lhs, depth - 1), element_range(op.rhs, depth - 1)
        return _lo(a_lo, b_lo), _hi(a_hi, b_hi)
    return None, None


def within(v: SSAValue, bound: int, wrap: bool) -> bool:
    """Whether every element of v is a valid index into a dim of static size `bound` ([-bound, bound) with wrap)."""
    least, most = element_range(v)
    return least is not None and most is not None and least >= (-bound if wrap else 0) and most < bound
