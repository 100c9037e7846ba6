"""Affine index expressions as LLVM IR: the kernel emitter's number type for index_math.

A number is a Python int (folded at compile time), an i64 or a `<W x i64>` vector (ivals.py: scalars
and vectors broadcast against each other). floordiv, ceildiv and mod keep the dialect's semantics for
any sign: LLVM's sdiv/srem truncate, so the quotient steps down when the remainder's sign differs
from the divisor's.
"""

from collections.abc import Callable

from irc.ir.index_math import Arith, ceildiv, floordiv, mod

from .ivals import add, kconst, mul, same


class IndexIR(Arith):
    """Index arithmetic emitted through the builder `b`; `dim(i)` and `syms[j]` give the leaves."""

    def __init__(self, b, dim: Callable[[int], object], syms):
        self.b, self._dim, self.syms = b, dim, syms

    def constant(self, value):
        return value

    def dim(self, position):
        return self._dim(position)

    def symbol(self, position):
        return self.syms[position]

    def add(self, a, b):
        return add(self.b, a, b)

    def mul(self, a, b):
        return mul(self.b, a, b)

    def _divide(self, a, b):
        """(x, y as values of one type, LLVM's truncated quotient and remainder, whether the floor is one below)."""
        ir = self.b
        x, y = same(ir, a, b)
        q, r = ir.sdiv(x, y), ir.srem(x, y)
        below = ir.and_(ir.icmp_signed("!=", r, kconst(r, 0)), ir.icmp_signed("<", ir.xor(r, y), kconst(r, 0)))
        return x, y, q, r, below

    def _floordiv(self, a, b):
        x, y, q, _, below = self._divide(a, b)
        return x, y, self.b.sub(q, self.b.zext(below, q.type))

    def floordiv(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return floordiv(a, b)
        return self._floordiv(a, b)[2]

    def ceildiv(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return ceildiv(a, b)
        x, y, fl = self._floordiv(a, b)
        exact = self.b.icmp_signed("==", self.b.mul(fl, y), x)
        return self.b.add(fl, self.b.zext(self.b.not_(exact), fl.type))

    def mod(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return mod(a, b)
        _, y, _, r, below = self._divide(a, b)
        return self.b.add(r, self.b.select(below, y, kconst(y, 0)))
