"""Fusion policy: which legal fusions to take. Each check returns None to fuse, or the reason not to.

The bounds keep fusion from trading memory traffic for too much recomputation: a producer
inlined at several distinct index points, or duplicated because it stays for other users, is
recomputed; a reduction is never recomputed, and a pointwise producer only while its cost times
the extra copies stays under `max_recompute_cost`. Values that do not vary along a dim are
computed once per row by the targets (loop-invariant), so a broadcast alone is not recomputation.
"""

from dataclasses import dataclass

from irc.dialects import loop

from .legality import SiblingPlan, VerticalPlan

FREE = ("loop.load", "loop.index", "loop.yield", "arith.constant")


def cost(nest: loop.NestOp) -> int:
    """Scalar work per point: body ops other than loads, index values, constants and the yield."""
    return sum(1 for op in nest.body.block.ops if op.name not in FREE)


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
    max_reduction_depth: int = 3

    def vertical(self, plan: VerticalPlan) -> str | None:
        p, c = plan.producer, plan.consumer
        distinct = {exprs for _, exprs in plan.sites}
        copies = len(distinct) + (1 if plan.keep and tuple(plan.identity) not in distinct else 0)
        extra = copies - 1 + (1 if plan.stays else 0)
        if extra > 0 and p.reduction_dims():
            return f"would recompute a reduction {extra} more time(s)"
        if extra > 0 and cost(p) * extra > self.max_recompute_cost:
            return f"would recompute the producer ({cost(p)} ops) {extra} more time(s)"
        size = len(c.body.block.ops) + copies * len(p.body.block.ops)
        if size > self.max_body_ops:
            return f"fused body would have {size} ops (limit {self.max_body_ops})"
        if depth(p) + depth(c) > self.max_reduction_depth:
            return f"fused nest would need more than {self.max_reduction_depth} passes over its rows"
        return None

    def sibling(self, plan: SiblingPlan) -> str | None:
        size = len(plan.first.body.block.ops) + len(plan.second.body.block.ops)
        if size > self.max_body_ops:
            return f"fused body would have {size} ops (limit {self.max_body_ops})"
        return None
