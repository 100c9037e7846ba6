"""Selects that branch: where a select's condition is one value for the whole vector (it depends on no lane, or on
an aligned group of the vector dim's lanes), only the arm it picks is computed.

A cat, or the sum of zero-padded pieces a select's backward leaves (q, k and v's gradients back into the qkv
projection's), reads each element from one of its sources, chosen by which piece the element lies in. As straight
code every element loads from every source (and a transposed source is a gather), then keeps one. The condition is
usually the same across a vector (the pieces are whole rows, or runs of 256 columns), so the kernel branches on it:
the loads of the other arms never run. A condition that differs between lanes keeps the straight select.

branching_selects finds the selects worth a branch and the ops each arm alone needs; the Body (body.py) emits them.
"""

from __future__ import annotations

from xdsl.dialects import arith

from irc.dialects import loop
from irc.dialects.math_cost import costly_math


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
