"""Range-aware simplification of affine index expressions (what composing view maps leaves behind).

Composing reshape (4, 8) -> (32) with (32) -> (4, 8) gives ((d0 * 8 + d1) floordiv 8, (d0 * 8 + d1) mod 8);
knowing 0 <= d1 < 8, that is (d0, d1). An expression is flattened to a sum of terms (coefficient *
atom, where an atom is a dim, a symbol or an irreducible floordiv/mod) plus a constant; floordiv and
mod by a constant split off the terms their divisor divides and drop a remainder that provably lies
in [0, divisor). Dims range over [0, extent); symbols and unknown extents are only known to be >= 0.
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

Linear = tuple[dict[AffineExpr, int], int]  # atom -> coefficient, constant
INF = float("inf")


def _add(a: Linear, b: Linear, k: int = 1) -> Linear:
    terms = dict(a[0])
    for atom, c in b[0].items():
        terms[atom] = terms.get(atom, 0) + k * c
    return {t: c for t, c in terms.items() if c}, a[1] + k * b[1]


def _scale(a: Linear, k: int) -> Linear:
    return ({t: c * k for t, c in a[0].items()} if k else {}), a[1] * k


class Simplifier:
    def __init__(self, extents: Sequence[int | None]):
        self.extents = list(extents)

    def atom_range(self, atom: AffineExpr) -> tuple[float, float]:
        if isinstance(atom, AffineDimExpr):
            n = self.extents[atom.position] if atom.position < len(self.extents) else None
            return 0, (n - 1 if n is not None else INF)
        if isinstance(atom, AffineBinaryOpExpr) and atom.kind == AffineBinaryOpKind.Mod and isinstance(atom.rhs, AffineConstantExpr):
            return 0, atom.rhs.value - 1
        if isinstance(atom, AffineBinaryOpExpr) and atom.kind == AffineBinaryOpKind.FloorDiv:
            lo, hi = self.range(self.linear(atom.lhs))
            d = atom.rhs.value
            return (lo // d if lo != -INF else -INF), (hi // d if hi != INF else INF)
        return 0, INF  # symbols (sizes) and anything else non-negative by construction

    def range(self, lin: Linear) -> tuple[float, float]:
        lo = hi = lin[1]
        for atom, c in lin[0].items():
            a, b = self.atom_range(atom)
            lo += min(c * a, c * b)
            hi += max(c * a, c * b)
        return lo, hi

    def linear(self, e: AffineExpr) -> Linear:
        if isinstance(e, AffineConstantExpr):
            return {}, e.value
        if isinstance(e, AffineDimExpr | AffineSymExpr):
            return {e: 1}, 0
        assert isinstance(e, AffineBinaryOpExpr)
        if e.kind == AffineBinaryOpKind.Add:
            return _add(self.linear(e.lhs), self.linear(e.rhs))
        if e.kind == AffineBinaryOpKind.Mul:
            a, b = self.linear(e.lhs), self.linear(e.rhs)
            if not b[0]:
                return _scale(a, b[1])
            if not a[0]:
                return _scale(b, a[1])
            return {AffineBinaryOpExpr(e.kind, self.build(a), self.build(b)): 1}, 0
        if isinstance(e.rhs, AffineConstantExpr) and e.rhs.value > 0:
            return self.divmod(e.kind, self.linear(e.lhs), e.rhs.value)
        return {AffineBinaryOpExpr(e.kind, self.simplify(e.lhs), self.simplify(e.rhs)): 1}, 0

    def divmod(self, kind: AffineBinaryOpKind, lin: Linear, d: int) -> Linear:
        whole = ({t: c // d for t, c in lin[0].items() if c % d == 0}, lin[1] // d)
        rest = ({t: c for t, c in lin[0].items() if c % d}, lin[1] % d)
        lo, hi = self.range(rest)
        if kind == AffineBinaryOpKind.FloorDiv:
            if 0 <= lo and hi < d:
                return whole
            if not rest[0] and rest[1] == 0:
                return whole
            return _add(whole, ({AffineBinaryOpExpr(kind, self.build(rest), AffineConstantExpr(d)): 1}, 0))
        if kind == AffineBinaryOpKind.Mod:
            if 0 <= lo and hi < d:
                return rest
            return {AffineBinaryOpExpr(kind, self.build(rest), AffineConstantExpr(d)): 1}, 0
        # ceildiv
        return {AffineBinaryOpExpr(kind, self.build(lin), AffineConstantExpr(d)): 1}, 0

    def build(self, lin: Linear) -> AffineExpr:
        out: AffineExpr | None = None
        for atom, c in sorted(lin[0].items(), key=lambda tc: _order(tc[0])):
            term = atom if c == 1 else AffineBinaryOpExpr(AffineBinaryOpKind.Mul, atom, AffineConstantExpr(c))
            out = term if out is None else AffineBinaryOpExpr(AffineBinaryOpKind.Add, out, term)
        if out is None:
            return AffineConstantExpr(lin[1])
        if lin[1]:
            out = AffineBinaryOpExpr(AffineBinaryOpKind.Add, out, AffineConstantExpr(lin[1]))
        return out

    def simplify(self, e: AffineExpr) -> AffineExpr:
        return self.build(self.linear(e))


def _order(atom: AffineExpr) -> tuple:
    if isinstance(atom, AffineDimExpr):
        return (0, atom.position)
    if isinstance(atom, AffineSymExpr):
        return (1, atom.position)
    return (2, str(atom))


def simplify_map(m: AffineMap, extents: Sequence[int | None]) -> AffineMap:
    s = Simplifier(extents)
    return AffineMap(m.num_dims, m.num_symbols, tuple(s.simplify(e) for e in m.results))
