"""The range every element of an integer tensor provably lies in, read off the tn ops that made it: a gather whose
index tensor lies inside its source needs no bounds check (a clamped index, an iota, a pick between such).

tensor-to-loop lowers producers before their consumers, so a gather sees its index's producers as loop nests: each
lowering `remember`s the range of the tn values it replaces on the ops replacing them (the `irc.ranges` attribute,
dropped again by `forget` at the end of the pass). Anything not understood is unbounded: the check stays.
"""

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    i64,
)
from xdsl.ir import OpResult, SSAValue

from irc.dialects import tensor as tn
from irc.dialects.tensor.base import element, shape

RANGES = "irc.ranges"  # on an op that replaced tn ops during tensor-to-loop: per result, [least, most]
UNKNOWN = ArrayAttr([])  # a bound not proven
UNBOUNDED = ArrayAttr([UNKNOWN, UNKNOWN])
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
    if isinstance(v, OpResult) and RANGES in op.attributes:
        least, most = op.attributes[RANGES].data[v.index].data
        return tuple(b.value.data if isinstance(b, IntegerAttr) else None for b in (least, most))
    if isinstance(op, tn.ConstantOp):
        return _constant(op)
    if isinstance(op, tn.IotaOp):
        n = shape(op.result)[0]
        return (0, n - 1) if isinstance(n, int) and n > 0 else (0, None)
    if isinstance(op, _VIEWS):
        return element_range(op.input, depth - 1)
    if (
        isinstance(op, tn.ConvertOp)
        and isinstance(element(op.input), IntegerType)
        and element(op.input).bitwidth <= element(v).bitwidth
    ):
        least, most = element_range(op.input, depth - 1)  # a wider integer keeps every value but a negative's sign,
        unsigned = element(v).signedness.data == Signedness.UNSIGNED  # which an unsigned one wraps
        return (least, most) if not unsigned or (least is not None and least >= 0) else (None, None)
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


def remember(old: tuple[SSAValue, ...], new: list[SSAValue]) -> None:
    """Keep the proven ranges of the tn values `old` on the ops whose results `new` replace them."""
    for o, n in zip(old, new):
        if not isinstance(n, OpResult) or not isinstance(element(o), IntegerType):
            continue
        bounds = tuple(x if x is not None and -(2**63) <= x < 2**63 else None for x in element_range(o))
        if bounds == (None, None):
            continue
        owner = n.owner
        slots = list(owner.attributes[RANGES].data) if RANGES in owner.attributes else [UNBOUNDED] * len(owner.results)
        slots[n.index] = ArrayAttr([UNKNOWN if x is None else IntegerAttr(x, i64) for x in bounds])
        owner.attributes[RANGES] = ArrayAttr(slots)


def forget(module: ModuleOp) -> None:
    for op in module.walk():
        op.attributes.pop(RANGES, None)
