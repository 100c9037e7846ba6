"""Index arithmetic: one walk of an affine expression, over a pluggable number type.

Every stage and target reads affine index maps the same way and differs only in what a number is:
intervals (bounds), linear forms (flattening, simplification), LLVM values (the cpu emitter), Triton
source text (the triton emitter). A number type (`Arith`) says what constants, dims and symbols are
and what the five operations do; `evaluate` does the walk. Plain evaluation on Python ints or int64
torch tensors is xDSL's `AffineExpr.eval`, whose semantics every number type here keeps: floordiv
rounds towards -inf, ceildiv towards +inf and mod takes the divisor's sign (Python's // and %).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

T = TypeVar("T")
K = AffineBinaryOpKind
INF = float("inf")


class Arith(Generic[T]):
    """A number type for index expressions: leaves (constants, dims, symbols) and the five operations."""

    def constant(self, value: int) -> T:
        raise NotImplementedError

    def dim(self, position: int) -> T:
        raise NotImplementedError

    def symbol(self, position: int) -> T:
        raise NotImplementedError

    def add(self, a: T, b: T) -> T:
        raise NotImplementedError

    def mul(self, a: T, b: T) -> T:
        raise NotImplementedError

    def floordiv(self, a: T, b: T) -> T:
        raise NotImplementedError

    def ceildiv(self, a: T, b: T) -> T:
        raise NotImplementedError

    def mod(self, a: T, b: T) -> T:
        raise NotImplementedError


_OPERATION = {K.Add: "add", K.Mul: "mul", K.FloorDiv: "floordiv", K.CeilDiv: "ceildiv", K.Mod: "mod"}


def evaluate(e: AffineExpr, arith: Arith[T]) -> T:
    """The value of `e` in the number type `arith` (operands first, then the operation)."""
    if isinstance(e, AffineConstantExpr):
        return arith.constant(e.value)
    if isinstance(e, AffineDimExpr):
        return arith.dim(e.position)
    if isinstance(e, AffineSymExpr):
        return arith.symbol(e.position)
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = evaluate(e.lhs, arith), evaluate(e.rhs, arith)
    return getattr(arith, _OPERATION[e.kind])(a, b)


def evaluate_map(m: AffineMap, arith: Arith[T]) -> list[T]:
    return [evaluate(e, arith) for e in m.results]


def floordiv(a: int, b: int) -> int:
    return a // b


def ceildiv(a: int, b: int) -> int:
    return -(-a // b)


def mod(a: int, b: int) -> int:
    return a % b


# -- bounds: closed intervals with infinite ends -------------------------------------------------
Interval = tuple[float, float]


class Bounds(Arith[Interval]):
    """An interval holding every value of an expression when dim i lies in dims[i] and symbol j in syms[j]."""

    def __init__(self, dims: Sequence[Interval] = (), syms: Sequence[Interval] = ()):
        self.dims, self.syms = dims, syms

    def constant(self, value):
        return value, value

    def dim(self, position):
        return self.dims[position]

    def symbol(self, position):
        return self.syms[position]

    def add(self, a, b):
        return a[0] + b[0], a[1] + b[1]

    def mul(self, a, b):
        for x, (c, c2) in ((a, b), (b, a)):  # the usual case: times a constant
            if c == c2 == 0:  # 0 times anything, an unbounded factor too (inf * 0 would be nan)
                return 0, 0
            if c == c2 and abs(c) != INF:
                return (x[0] * c, x[1] * c) if c >= 0 else (x[1] * c, x[0] * c)
        return -INF, INF

    def _divisor(self, b) -> int | None:
        return b[0] if b[0] == b[1] and 0 < b[0] < INF else None

    def floordiv(self, a, b):
        c = self._divisor(b)
        if c is None:
            return -INF, INF
        return (a[0] // c if a[0] != -INF else -INF), (a[1] // c if a[1] != INF else INF)

    def ceildiv(self, a, b):
        c = self._divisor(b)
        if c is None:
            return -INF, INF
        return (ceildiv(a[0], c) if a[0] != -INF else -INF), (ceildiv(a[1], c) if a[1] != INF else INF)

    def mod(self, a, b):
        c = self._divisor(b)
        if c is None:
            return -INF, INF
        return a if 0 <= a[0] and a[1] < c else (0, c - 1)


def bounds(e: AffineExpr, dims: Sequence[Interval], syms: Sequence[Interval]) -> Interval:
    return evaluate(e, Bounds(dims, syms))


# -- linear forms: sum of coefficient * atom, plus a constant ------------------------------------
Linear = tuple[dict[AffineExpr, int], int]  # atom -> coefficient (never 0), constant


def add_linear(a: Linear, b: Linear, k: int = 1) -> Linear:
    """a + k * b."""
    terms = dict(a[0])
    for atom, c in b[0].items():
        terms[atom] = terms.get(atom, 0) + k * c
    return {t: c for t, c in terms.items() if c}, a[1] + k * b[1]


def scale_linear(a: Linear, k: int) -> Linear:
    return ({t: c * k for t, c in a[0].items()} if k else {}), a[1] * k


class LinearForms(Arith["Linear | None"]):
    """An expression as a linear form over its dims and symbols; None where it is not linear."""

    def constant(self, value):
        return {}, value

    def dim(self, position):
        return {AffineDimExpr(position): 1}, 0

    def symbol(self, position):
        return {AffineSymExpr(position): 1}, 0

    def add(self, a, b):
        return None if a is None or b is None else add_linear(a, b)

    def mul(self, a, b):
        if a is None or b is None:
            return None
        if not b[0]:
            return scale_linear(a, b[1])
        return scale_linear(b, a[1]) if not a[0] else None

    def floordiv(self, a, b):
        return None

    def ceildiv(self, a, b):
        return None

    def mod(self, a, b):
        return None
