"""The nest's body at one point of the space, as straight-line code: each op from the op table (ops.EMIT), loads and
stores through Access, values that are one for the whole vector as scalars, and the selects that branch
(branches.py) as branches.

A body value is a scalar (uniform across the lanes) or a vector; an op with mixed operands broadcasts the scalars.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith

from irc.dialects import loop

from .affine import aligned_lanes
from .branches import branching_selects
from .ivals import Lanes, count, set_at, splat
from .ops import EMIT, Cx
from .types import Unsupported
from .vec import I64

# a compare whose threshold, a multiple of the width, no aligned vector straddles: predicate -> threshold - constant
THRESHOLD = {"slt": 0, "sge": 0, "ult": 0, "uge": 0, "sle": 1, "sgt": 1, "ule": 1, "ugt": 1}


class Body:
    """`evaluate` computes body values at a point, emitting the ops they need."""

    def __init__(self, space, frame, access):
        self.space, self.frame, self.access = space, frame, access
        self.branching = branching_selects(space.ops)

    def evaluate(self, b, width, dims, env, roots) -> dict:
        """env with the values `roots` at the point `dims` (vectors of `width` lanes, or scalars with None), and every
        value computed on the way."""
        opset = self.space.opset
        need, stack = set(), [r for r in roots if r not in env]
        while stack:
            op = stack.pop().owner
            if op in need:
                continue
            if isinstance(op, loop.ReduceOp):
                raise Unsupported("a reduction result is used before it is computed")
            need.add(op)
            stack.extend(o for o in op.operands if o not in env and o.owner in opset)
        local = dict(env)
        self.emit_ops(b, [op for op in self.space.ops if op in need], dims, local, width)
        return local

    def emit_ops(self, b, ops: list, dims, local: dict, width) -> None:
        """Emit `ops` (in body order) into `local`; the arms of branching selects inside their branches."""
        arms = set().union(*(arm for s in ops if s in self.branching for arm in self.branching[s]))
        for op in ops:
            if op in arms:
                continue
            if op in self.branching:
                local[op.results[0]] = self.branch(b, op, ops, dims, local, width)
            else:
                local[op.results[0]] = self.emit_op(b, op, dims, local, width)

    def emit_op(self, b, op, dims, env, width):
        if isinstance(op, loop.LoadOp):
            return self.access.load(b, op, dims, env, width)
        if (x := self.uniform(b, op, dims, env)) is not None:  # one value for the whole vector
            return x
        if isinstance(op, loop.IndexOp):
            x = self.frame.aff(b, op.map.data.results[0], dims, width)
            return ir.Constant(I64, x) if isinstance(x, int) else x
        fn = EMIT.get(type(op))
        if fn is None:
            raise Unsupported(f"no CPU emitter for {op.name}")
        args = [env[o] for o in op.operands]
        n = max((count(a) or 0 for a in args), default=0)
        if n:
            args = [splat(b, a, n) for a in args]
        return fn(Cx(b, n or None), op, *args)

    def branch(self, b, s, ops: list, dims, local: dict, width):
        """The branching select s: the arm its condition picks, in a branch, where the condition is a scalar."""
        t_ops, f_ops = ([op for op in ops if op in arm] for arm in self.branching[s])
        cond = local[s.cond]
        if count(cond):  # differs between lanes: both arms, then the select
            self.emit_ops(b, t_ops + f_ops, dims, local, width)
            return self.emit_op(b, s, dims, local, width)
        ends = []
        with b.if_else(cond) as (then, otherwise):
            for block, arm_ops, value in ((then, t_ops, s.lhs), (otherwise, f_ops, s.rhs)):
                with block:
                    arm = dict(local)
                    self.emit_ops(b, arm_ops, dims, arm, width)
                    x = arm[value]
                    ends.append((splat(b, x, width) if width else x, b.block))
        phi = b.phi(ends[0][0].type)
        for x, block in ends:
            phi.add_incoming(x, block)
        return phi

    def uniform(self, b, op, dims, env):
        """op's value as a scalar where it is the same in every lane of the vector `dims` holds (None elsewhere): an
        index with no lane step (`d floordiv 256` in aligned vectors), or a compare of the index d (aligned) with a
        constant the vectors do not straddle (`d < 64` at 16 lanes)."""
        s, f = self.space, self.frame
        lanes = dims[s.v] if s.v is not None else None
        if not isinstance(op, loop.IndexOp | arith.CmpiOp) or not isinstance(lanes, Lanes):
            return None
        scalar = set_at(dims, s.v, lanes.base)
        if isinstance(op, loop.IndexOp) and s.lane_step(e := op.map.data.results[0], s.L) == 0:
            x = f.aff(b, e, scalar, None)
            return ir.Constant(I64, x) if isinstance(x, int) else x
        if not (isinstance(op, arith.CmpiOp) and s.aligned):
            return None
        index, k = op.lhs.owner, op.rhs.owner
        while isinstance(index, arith.IndexCastOp):  # index <-> i64: the same 64-bit value
            index = index.input.owner
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        if not (pred in THRESHOLD and isinstance(index, loop.IndexOp) and isinstance(k, arith.ConstantOp)):
            return None
        e = index.map.data.results[0]
        if op.rhs not in env or not aligned_lanes(e, s.v, s.L) or (k.value.value.data + THRESHOLD[pred]) % s.L:
            return None
        x = f.aff(b, e, scalar, None)
        known = {op.lhs: ir.Constant(I64, x) if isinstance(x, int) else x, op.rhs: env[op.rhs]}
        return self.emit_op(b, op, scalar, known, None)
