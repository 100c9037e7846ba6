"""Selects that branch: where a select's condition is one value for the whole vector (it depends on no lane, or on
an aligned group of the vector dim's lanes), only the arm it picks is computed.

A cat, or the sum of zero-padded pieces a select's backward leaves (q, k and v's gradients back into the qkv
projection's), reads each element from one of its sources, chosen by which piece the element lies in. As straight
code every element loads from every source (and a transposed source is a gather), then keeps one. The condition is
usually the same across a vector (the pieces are whole rows, or runs of 256 columns), so the kernel branches on it:
the loads of the other arms never run. A condition that differs between lanes keeps the straight select.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith

from irc.dialects import loop
from irc.dialects.math_cost import costly_math

from .affine import aligned_lanes
from .ivals import Lanes, count, set_at, splat
from .vec import I64

# a compare whose threshold, a multiple of the width, no aligned vector straddles: predicate -> threshold - constant
THRESHOLD = {"slt": 0, "sge": 0, "ult": 0, "uge": 0, "sle": 1, "sgt": 1, "ule": 1, "ugt": 1}


def branching_selects(ops: list) -> dict:
    """select -> (the ops only its true value needs, those only its false value needs), for the selects where an arm
    has a load or a math function to skip."""
    pos = {op: i for i, op in enumerate(ops)}
    out = {}
    for s in ops:
        if isinstance(s, arith.SelectOp):
            arms = (_only_for(s, 1, pos), _only_for(s, 2, pos))
            if any(isinstance(o, loop.LoadOp) or costly_math(o) for arm in arms for o in arm):
                out[s] = arms
    return out


def _only_for(s, k: int, pos: dict) -> set:
    """The body ops whose every use leads (through others of them) to operand k of s, and nowhere else."""
    cone, stack = set(), [s.operands[k]]
    while stack:
        op = stack.pop().owner
        if op in pos and op not in cone and not isinstance(op, loop.ReduceOp):
            cone.add(op)
            stack.extend(op.operands)
    only = set()
    for op in sorted(cone, key=pos.get, reverse=True):  # every user before its operands
        if all(u.operation in only or (u.operation is s and u.index == k) for r in op.results for u in r.uses):
            only.add(op)
    return only


class Branches:
    """KernelEmitter's straight-line body code, with `branching` selects (branching_selects) as branches."""

    branching: dict

    def uniform(self, b, op, dims, env):
        """op's value as a scalar where it is the same in every lane of the vector `dims` holds (None elsewhere): an
        index with no lane step (`d floordiv 256` in aligned vectors), or a compare of the index d (aligned) with a
        constant the vectors do not straddle (`d < 64` at 16 lanes)."""
        lanes = dims[self.v] if self.v is not None else None
        if not isinstance(op, loop.IndexOp | arith.CmpiOp) or not isinstance(lanes, Lanes):
            return None
        scalar = set_at(dims, self.v, lanes.base)
        if isinstance(op, loop.IndexOp) and self.lane_step(e := op.map.data.results[0], self.L) == 0:
            x = self.aff(b, e, scalar, None)
            return ir.Constant(I64, x) if isinstance(x, int) else x
        if not (isinstance(op, arith.CmpiOp) and self.aligned):
            return None
        index, k = op.lhs.owner, op.rhs.owner
        while isinstance(index, arith.IndexCastOp):  # index <-> i64: the same 64-bit value
            index = index.input.owner
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        if (pred in THRESHOLD and isinstance(index, loop.IndexOp) and isinstance(k, arith.ConstantOp) and op.rhs in env
                and aligned_lanes(e := index.map.data.results[0], self.v, self.L)
                and (k.value.value.data + THRESHOLD[pred]) % self.L == 0):  # fmt: skip
            x = self.aff(b, e, scalar, None)
            return self.emit_op(b, op, scalar, {op.lhs: ir.Constant(I64, x) if isinstance(x, int) else x,
                                                op.rhs: env[op.rhs]}, None)  # fmt: skip
        return None

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

    def branch(self, b, s, ops: list, dims, local: dict, width):
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
