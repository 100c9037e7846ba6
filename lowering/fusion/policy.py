"""Fusion policy: which legal fusions to take. Each check returns None to fuse, or the reason not to.

The bounds keep fusion from trading memory traffic for too much recomputation: a producer
inlined at several distinct index points, or duplicated because it stays for other users, is
recomputed; a reduction is never recomputed, and a pointwise producer only while its cost times
the extra copies stays under `max_recompute_cost`. A producer that stays for other users writes its result
anyway, so a copy of it may not make a consumer read two or more large inputs in place of that one result
(a residual block's relu(a + b) copied into the next residual add would read a and b again). Values that do not vary along a dim are
computed once per row by the targets (loop-invariant), so a broadcast alone is not recomputation.
But such values are scalars: a producer whose math functions (exp, tanh, ...) vary only along dims the
consumer does not vectorize would run them one point at a time, where its own nest runs them a vector at
a time (a softmax fused into the weighted sum over its rows ran many times slower than apart).
"""

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import ShapedType
from xdsl.ir.affine import AffineConstantExpr

from irc.dialects import loop
from irc.dialects.math_cost import costly_math
from irc.ir.types import DYN

from .legality import SiblingPlan, VerticalPlan

FREE = ("loop.load", "loop.index", "loop.yield", "arith.constant")
VECTOR_MIN = (
    4  # the targets vectorize an innermost dim of at least this extent (targets/cpu/codegen/tuning.py MIN_LANES_EXTENT)
)
SCALAR_WORK = 256  # math functions run as scalars per call above which a producer stays a kernel of its own
STREAMING = 1 << 16  # points of a nest whose buffers stream from memory (a sibling fusion must share reads to pay)
SMALL_SHARE = 16  # a common input this many times smaller than the space is no reason to fuse siblings


def cost(nest: loop.NestOp) -> int:
    """Scalar work per point: body ops other than loads, index values, constants and the yield."""
    return sum(1 for op in nest.body.block.ops if op.name not in FREE)


def _static(e) -> int | None:
    return e.value if isinstance(e, AffineConstantExpr) else None


def scalar_math(plan: VerticalPlan) -> int:
    """How many math functions the fused nest would run as scalars, per call: the producer's, when no site of it
    varies along the consumer's innermost (vector) dim but the producer's own innermost dim would be vectorized,
    times the points of the consumer's other dims (a dim of runtime extent counts as SCALAR_WORK: large)."""
    p, c = plan.producer, plan.consumer
    fns = sum(1 for op in p.body.block.ops if costly_math(op))
    if not fns or not c.rank or not p.rank:
        return 0
    v = c.rank - 1
    small = [(n := _static(e)) is not None and n < VECTOR_MIN for e in (c.extents[v], p.extents[p.rank - 1])]
    if any(small) or any(e is not None and v in e.used_dims() for _, exprs in plan.sites for e in exprs):
        return 0
    points = 1
    for e in c.extents[:v]:
        points *= _static(e) or SCALAR_WORK
    return fns * points


def shares_little(plan: SiblingPlan) -> bool:
    """Two nests of at least STREAMING points whose common inputs are all SMALL_SHARE times smaller than that (a
    broadcast bias, an optimizer's 0-d step sizes): one pass reads nothing once that two would read twice, and it
    streams every buffer of both at once: an optimizer's update of many weights fused into one kernel of dozens of
    streams ran slower than its nests apart."""
    points = _points(plan.first)
    if points < STREAMING:
        return False  # small nests: one launch instead of two is the gain
    return not any(_large(v, points) for v in plan.shared)


def added_reads(plan: VerticalPlan) -> int:
    """Large inputs (against the consumer's points) the producer loads that the consumer does not load already: what a
    copy of a producer that stays makes the consumer read in place of the one result the producer writes anyway."""
    points = _points(plan.consumer)
    return len({v for v in plan.producer.inputs() if _large(v, points)} - set(plan.consumer.inputs()))


def _points(nest: loop.NestOp) -> int:
    """The nest's points, a runtime extent counted as STREAMING."""
    points = 1
    for e in nest.extents:
        points *= _static(e) or STREAMING
    return points


def _large(v, points: int) -> bool:
    """More than 1/SMALL_SHARE of `points` elements (a runtime size counts as large)."""
    shape = v.type.get_shape() if isinstance(v.type, ShapedType) else ()
    return DYN in shape or math.prod(shape) * SMALL_SHARE > points


def depth(nest: loop.NestOp) -> int:
    """The longest chain of loop.reduce ops in the body (the number of passes over a row)."""
    d: dict = {}
    out = 0
    for op in nest.body.block.ops:
        k = max((d.get(v, 0) for v in op.operands), default=0) + isinstance(op, loop.ReduceOp)
        for r in op.results:
            d[r] = k
        out = max(out, k)
    return out


@dataclass(frozen=True)
class Policy:
    max_body_ops: int = 400
    max_recompute_cost: int = 24
    max_reduction_depth: int = 4

    def vertical(self, plan: VerticalPlan) -> str | None:
        p, c = plan.producer, plan.consumer
        distinct = {exprs for _, exprs in plan.sites}
        copies = len(distinct) + (1 if plan.keep and tuple(plan.identity) not in distinct else 0)
        extra = copies - 1 + (1 if plan.stays else 0)
        if extra > 0 and p.reduction_dims():
            return f"would recompute a reduction {extra} more time(s)"
        if extra > 0 and cost(p) * extra > self.max_recompute_cost:
            return f"would recompute the producer ({cost(p)} ops) {extra} more time(s)"
        if plan.stays and (added := added_reads(plan)) > 1:
            return (
                f"the producer stays for other users: its copy would read {added} large inputs where its result is one"
            )
        size = len(c.body.block.ops) + copies * len(p.body.block.ops)
        if size > self.max_body_ops:
            return f"fused body would have {size} ops (limit {self.max_body_ops})"
        if depth(p) + depth(c) > self.max_reduction_depth:
            return f"fused nest would need more than {self.max_reduction_depth} passes over its rows"
        if scalar_math(plan) >= SCALAR_WORK:
            return (
                "would run the producer's math functions as scalars (they do not vary along the consumer's vector dim)"
            )
        return None

    def sibling(self, plan: SiblingPlan) -> str | None:
        size = len(plan.first.body.block.ops) + len(plan.second.body.block.ops)
        if size > self.max_body_ops:
            return f"fused body would have {size} ops (limit {self.max_body_ops})"
        if shares_little(plan):
            return "shares only small inputs: one pass would stream both nests' buffers at once"
        return None
