"""Affine index expressions as Triton index arithmetic (index_math's number type of source text).

Dims whose extent is statically 1 print as 0, and terms that become 0 vanish, so keepdim outputs and
broadcasts cost nothing. floordiv/mod print as `//`/`%` when the dividend is provably non-negative
(dims, symbols, non-negative coefficients), else through the prelude's floor-exact helpers.
"""

from collections.abc import Sequence

from xdsl.ir.affine import AffineExpr

from irc.ir.index_math import Arith, evaluate

Text = tuple[str, bool]  # (source, provably non-negative)


class Printer(Arith[Text]):
    """Prints affine expressions over named dims (None: statically 0) and named symbols."""

    def __init__(self, dims: Sequence[str | None], syms: Sequence[str]):
        self.dims, self.syms = list(dims), list(syms)

    def text(self, e: AffineExpr) -> str:
        return evaluate(e, self)[0]

    def constant(self, value):
        return str(value), value >= 0

    def dim(self, position):
        return (self.dims[position] or "0"), True

    def symbol(self, position):
        return self.syms[position], True

    def add(self, x, y):
        (a, an), (b, bn) = x, y
        if a == "0" or b == "0":
            return (b if a == "0" else a), an and bn
        if b.startswith("-"):
            return f"({a} - {b[1:]})", False
        return f"({a} + {b})", an and bn

    def mul(self, x, y):
        (a, an), (b, bn) = x, y
        if a == "0" or b == "0":
            return "0", True
        if a == "1" or b == "1":
            return (b if a == "1" else a), an and bn
        if b == "-1":
            return f"-{a}", False
        return f"{a} * {b}", an and bn

    def floordiv(self, x, y):
        (a, an), (b, _) = x, y
        if a == "0":
            return "0", True
        return (f"({a} // {b})", True) if an else (f"_floordivsi({a}, {b})", False)

    def ceildiv(self, x, y):
        (a, an), (b, _) = x, y
        if a == "0":
            return "0", True
        return f"(-_floordivsi(-{a}, {b}))", an

    def mod(self, x, y):
        (a, an), (b, _) = x, y
        if a == "0":
            return "0", True
        return (f"({a} % {b})", True) if an else (f"_mod({a}, {b})", True)
