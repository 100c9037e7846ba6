"""Affine index expressions as Triton index arithmetic, and the bounds that spare a load its range mask.

Dims whose extent is statically 1 print as 0, and terms that become 0 vanish, so keepdim outputs and
broadcasts cost nothing. floordiv/mod print as `//`/`%` when the dividend is provably non-negative
(dims, symbols, non-negative coefficients), else through the prelude's floor-exact helpers.
"""

from collections.abc import Sequence

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr, AffineSymExpr

INF = float("inf")


class Printer:
    """Prints affine expressions over named dims (None: statically 0) and named symbols."""

    def __init__(self, dims: Sequence[str | None], syms: Sequence[str]):
        self.dims, self.syms = list(dims), list(syms)

    def text(self, e: AffineExpr) -> str:
        return self._print(e)[0]

    def _print(self, e: AffineExpr) -> tuple[str, bool]:
        """(text, provably non-negative)."""
        if isinstance(e, AffineConstantExpr):
            return str(e.value), e.value >= 0
        if isinstance(e, AffineDimExpr):
            name = self.dims[e.position]
            return (name or "0"), True
        if isinstance(e, AffineSymExpr):
            return self.syms[e.position], True
        assert isinstance(e, AffineBinaryOpExpr)
        (a, an), (b, bn) = self._print(e.lhs), self._print(e.rhs)
        k = e.kind
        if k == AffineBinaryOpKind.Add:
            if a == "0" or b == "0":
                return (b if a == "0" else a), an and bn
            if b.startswith("-"):
                return f"({a} - {b[1:]})", False
            return f"({a} + {b})", an and bn
        if k == AffineBinaryOpKind.Mul:
            if a == "0" or b == "0":
                return "0", True
            if a == "1" or b == "1":
                return (b if a == "1" else a), an and bn
            if b == "-1":
                return f"-{a}", False
            return f"{a} * {b}", an and bn
        if a == "0":
            return "0", True
        if k == AffineBinaryOpKind.FloorDiv:
            return (f"({a} // {b})", True) if an else (f"_floordivsi({a}, {b})", False)
        if k == AffineBinaryOpKind.CeilDiv:
            return f"(-_floordivsi(-{a}, {b}))", an
        return (f"({a} % {b})", True) if an else (f"_mod({a}, {b})", True)


def bounds(e: AffineExpr, dims: Sequence[tuple[float, float]], syms: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """An interval holding every value of `e` when dim i lies in dims[i] and symbol j in syms[j]."""
    if isinstance(e, AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    (alo, ahi), (blo, bhi) = bounds(e.lhs, dims, syms), bounds(e.rhs, dims, syms)
    k = e.kind
    if k == AffineBinaryOpKind.Add:
        return alo + blo, ahi + bhi
    if k == AffineBinaryOpKind.Mul:
        if blo == bhi and abs(blo) != INF:  # the usual case: times a constant
            c = blo
            return (alo * c, ahi * c) if c >= 0 else (ahi * c, alo * c)
        if alo == ahi and abs(alo) != INF:
            c = alo
            return (blo * c, bhi * c) if c >= 0 else (bhi * c, blo * c)
        return -INF, INF
    if blo != bhi or blo <= 0:
        return -INF, INF
    c = blo
    if k == AffineBinaryOpKind.Mod:
        return (alo, ahi) if 0 <= alo and ahi < c else (0, c - 1)
    if k == AffineBinaryOpKind.FloorDiv:
        return alo // c if alo != -INF else -INF, ahi // c if ahi != INF else INF
    return -(-alo // c) if alo != -INF else -INF, -(-ahi // c) if ahi != INF else INF
