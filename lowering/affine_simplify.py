"""Range-aware simplification of affine index expressions (what composing view maps leaves behind).

Composing reshape (4, 8) -> (32) with (32) -> (4, 8) gives ((d0 * 8 + d1) floordiv 8, (d0 * 8 + d1) mod 8);
knowing 0 <= d1 < 8, that is (d0, d1). An expression is flattened to a sum of terms (coefficient *
atom, where an atom is a dim, a symbol or an irreducible product, floordiv or mod) plus a constant:
index_math's linear forms, with products and divisions kept as atoms instead of giving up. floordiv
and mod by a constant split off the terms their divisor divides and drop a remainder that provably
lies in [0, divisor). Dims range over [0, extent); symbols and unknown extents are only known to be >= 0.
"""

from collections.abc import Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from irc.ir.index_math import INF, Bounds, Interval, Linear, LinearForms, add_linear, evaluate

K = AffineBinaryOpKind


class Simplifier(LinearForms):
    def __init__(self, extents: Sequence[int | None]):
        self.extents = list(extents)

    # -- the number type: linear forms whose atoms may be products and divisions ---------------
    def atom(self, kind: AffineBinaryOpKind, a: Linear, b: Linear) -> Linear:
        return {AffineBinaryOpExpr(kind, self.build(a), self.build(b)): 1}, 0

    def mul(self, a, b):
        return super().mul(a, b) or self.atom(K.Mul, a, b)

    def floordiv(self, a, b):
        return self.divmod(K.FloorDiv, a, b[1]) if not b[0] and b[1] > 0 else self.atom(K.FloorDiv, a, b)

    def ceildiv(self, a, b):
        return self.atom(K.CeilDiv, a, b)

    def mod(self, a, b):
        return self.divmod(K.Mod, a, b[1]) if not b[0] and b[1] > 0 else self.atom(K.Mod, a, b)

    # -- ranges ----------------------------------------------------------------------------------
    def atom_range(self, atom: AffineExpr) -> Interval:
        if isinstance(atom, AffineDimExpr):
            n = self.extents[atom.position] if atom.position < len(self.extents) else None
            return 0, (n - 1 if n is not None else INF)
        if isinstance(atom, AffineBinaryOpExpr) and atom.kind == K.Mod and isinstance(atom.rhs, AffineConstantExpr):
            return 0, atom.rhs.value - 1
        if isinstance(atom, AffineBinaryOpExpr) and atom.kind == K.FloorDiv:
            lhs, rhs = (self.range(evaluate(x, self)) for x in (atom.lhs, atom.rhs))
            return Bounds().floordiv(lhs, rhs)
        return 0, INF  # symbols (sizes) and anything else non-negative by construction

    def range(self, lin: Linear) -> Interval:
        lo = hi = lin[1]
        for atom, c in lin[0].items():
            a, b = self.atom_range(atom)
            lo += min(c * a, c * b)
            hi += max(c * a, c * b)
        return lo, hi

    def divmod(self, kind: AffineBinaryOpKind, lin: Linear, d: int) -> Linear:
        whole = ({t: c // d for t, c in lin[0].items() if c % d == 0}, lin[1] // d)
        rest = ({t: c for t, c in lin[0].items() if c % d}, lin[1] % d)
        lo, hi = self.range(rest)
        if kind == K.FloorDiv:
            if 0 <= lo and hi < d:
                return whole
            return add_linear(whole, self.atom(kind, rest, ({}, d)))
        if 0 <= lo and hi < d:
            return rest
        return self.atom(kind, rest, ({}, d))

    def build(self, lin: Linear) -> AffineExpr:
        out: AffineExpr | None = None
        for atom, c in sorted(lin[0].items(), key=lambda tc: _order(tc[0])):
            term = atom if c == 1 else AffineBinaryOpExpr(K.Mul, atom, AffineConstantExpr(c))
            out = term if out is None else AffineBinaryOpExpr(K.Add, out, term)
        if out is None:
            return AffineConstantExpr(lin[1])
        if lin[1]:
            out = AffineBinaryOpExpr(K.Add, out, AffineConstantExpr(lin[1]))
        return out

    def simplify(self, e: AffineExpr) -> AffineExpr:
        return self.build(evaluate(e, self))


def _order(atom: AffineExpr) -> tuple:
    if isinstance(atom, AffineDimExpr):
        return (0, atom.position)
    if isinstance(atom, AffineSymExpr):
        return (1, atom.position)
    return (2, str(atom))


def simplify_map(m: AffineMap, extents: Sequence[int | None]) -> AffineMap:
    s = Simplifier(extents)
    return AffineMap(m.num_dims, m.num_symbols, tuple(s.simplify(e) for e in m.results))
