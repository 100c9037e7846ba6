"""Index quantities the CPU target reasons about: linear forms over runtime cells, and the bounds of
affine index maps over an iteration space (what proves a load in bounds, so it needs no guard).

A `Lin` is `const + sum(coef * cell)`: a size, stride, offset or symbol that is either known at compile
time (no terms) or computed from values the runtime writes into numbered cells once per call. Every
cell holds a non-negative value (sizes, strides and size symbols), which is all the proofs assume.
Expressions are read through index_math's one walk, with Lins (LinForms), intervals of Lins
(LinBounds) and a dim's coefficient (Coefficient) as the number types.
"""

from __future__ import annotations

from math import gcd

from xdsl.ir.affine import AffineExpr

from irc.ir.index_math import Arith, ceildiv, evaluate, floordiv, mod


class Lin:
    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms=()):
        self.const = int(const)
        self.terms = tuple(sorted((c, k) for c, k in dict(_merge(terms)).items() if k))

    @staticmethod
    def of(x: int | Lin) -> Lin:
        return x if isinstance(x, Lin) else Lin(x)

    @staticmethod
    def cell(i: int) -> Lin:
        return Lin(0, ((i, 1),))

    @property
    def static(self) -> bool:
        return not self.terms

    def __add__(self, o):
        o = Lin.of(o)
        return Lin(self.const + o.const, self.terms + o.terms)

    __radd__ = __add__

    def __neg__(self):
        return Lin(-self.const, tuple((c, -k) for c, k in self.terms))

    def __sub__(self, o):
        return self + (-Lin.of(o))

    def __rsub__(self, o):
        return Lin.of(o) - self

    def __mul__(self, k):
        if isinstance(k, Lin):
            if not k.static:
                if self.static:
                    return k * self.const
                raise ValueError("product of two runtime quantities is not linear")
            k = k.const
        return Lin(self.const * k, tuple((c, v * k) for c, v in self.terms))

    __rmul__ = __mul__

    def __eq__(self, o):
        o = Lin.of(o) if isinstance(o, int) else o
        return isinstance(o, Lin) and self.const == o.const and self.terms == o.terms

    def __hash__(self):
        return hash((self.const, self.terms))

    def __repr__(self):
        parts = [f"{k}*c{c}" for c, k in self.terms] + ([str(self.const)] if self.const or not self.terms else [])
        return "+".join(parts)

    def nonneg(self) -> bool:
        """Provably >= 0 for every (non-negative) value of the cells."""
        return self.const >= 0 and all(k >= 0 for _, k in self.terms)

    def exact_div(self, k: int) -> Lin | None:
        """floor(self / k) when every coefficient is a multiple of k (so the floor falls on the constant)."""
        if k > 0 and all(v % k == 0 for _, v in self.terms):
            return Lin(self.const // k, tuple((c, v // k) for c, v in self.terms))
        return None

    def eval(self, cells) -> int:
        terms = self.terms
        if len(terms) == 1:  # the common case of a dynamic graph's per-call sizes: no generator
            c, k = terms[0]
            return self.const + k * cells[c]
        return self.const + sum(k * cells[c] for c, k in terms) if terms else self.const

    def cells(self) -> set[int]:
        return {c for c, _ in self.terms}

    def renumber(self, mapping: dict[int, int]) -> Lin:
        return Lin(self.const, tuple((mapping[c], k) for c, k in self.terms))


def _merge(terms):
    acc: dict[int, int] = {}
    for c, k in terms:
        acc[c] = acc.get(c, 0) + k
    return acc.items()


class LinForms(Arith["Lin | None"]):
    """An affine expression of symbols (and of dims given as Lins) as a Lin; None where it is not linear."""

    def __init__(self, syms, dims=()):
        self.syms, self.dims = syms, dims

    def constant(self, value):
        return Lin(value)

    def symbol(self, position):
        return Lin.of(self.syms[position])

    def dim(self, position):
        return Lin.of(self.dims[position]) if position < len(self.dims) else None

    def add(self, a, b):
        return None if a is None or b is None else a + b

    def mul(self, a, b):
        return a * b if a is not None and b is not None and (a.static or b.static) else None

    def _divide(self, fn, a, b):
        if a is None or b is None or not b.static:
            return None
        if a.static and b.const > 0:
            return Lin(fn(a.const, b.const))
        return a.exact_div(b.const) if fn is floordiv else None

    def floordiv(self, a, b):
        return self._divide(floordiv, a, b)

    def ceildiv(self, a, b):
        return self._divide(ceildiv, a, b)

    def mod(self, a, b):
        return self._divide(mod, a, b)


def to_lin(e: AffineExpr, syms, dims=()) -> Lin | None:
    return evaluate(e, LinForms(syms, dims))


class Coefficient(Arith["tuple[int | None, int | None]"]):
    """(the constant coefficient of dim d, or None where the expression is not linear in d; the
    expression's value when it is a constant, else None)."""

    def __init__(self, d: int):
        self.d = d

    def constant(self, value):
        return 0, value

    def dim(self, position):
        return (1 if position == self.d else 0), None

    def symbol(self, position):
        return 0, None

    def add(self, a, b):
        k = a[1] + b[1] if a[1] is not None and b[1] is not None else None
        return (a[0] + b[0] if a[0] is not None and b[0] is not None else None), k

    def mul(self, a, b):
        k = a[1] * b[1] if a[1] is not None and b[1] is not None else None
        if a[0] is None or b[0] is None:
            return None, k
        if a[0] == 0 and b[0] == 0:
            return 0, k
        if b[0] == 0 and b[1] is not None:
            return a[0] * b[1], k
        if a[0] == 0 and a[1] is not None:
            return b[0] * a[1], k
        return None, k

    def _divide(self, a, b):
        return (0 if a[0] == 0 and b[0] == 0 else None), None

    floordiv = ceildiv = mod = _divide


def coefficient(e: AffineExpr, d: int) -> int | None:
    """The constant coefficient of dim d in e (0 when e does not use it); None when e is not linear in d."""
    return evaluate(e, Coefficient(d))[0]


class LaneCoefficient(Arith["tuple[int, int | None, int] | None"]):
    """Dim d holding a group of `lanes` consecutive values whose first is a multiple of `lanes` (a vector of an
    aligned lanes loop): for each expression, (c, k, g) when its value at lane l is its value at lane 0 plus c*l
    in every lane, k its value when it is a constant, g a number its lane-0 value is a multiple of (0: the value
    is 0); None when the lanes do not move by one constant step. Alignment is what `coefficient` cannot use:
    `(d mod 256) floordiv 32` is the same in 16 aligned lanes (the head of a (..., 8, 32) view of 256 columns)
    and `d mod 32` moves by one, so such loads are one vector or one scalar, not a gather."""

    def __init__(self, d: int, lanes: int):
        self.d, self.lanes = d, lanes

    def constant(self, value):
        return 0, value, abs(value)

    def dim(self, position):
        return (1, None, self.lanes) if position == self.d else (0, None, 1)

    def symbol(self, position):
        return 0, None, 1

    def add(self, a, b):
        if a is None or b is None:
            return None
        k = a[1] + b[1] if a[1] is not None and b[1] is not None else None
        return a[0] + b[0], k, gcd(a[2], b[2])

    def mul(self, a, b):
        if a is None or b is None:
            return None
        for x, y in ((a, b), (b, a)):
            if y[1] is not None:
                return x[0] * y[1], (x[1] * y[1] if x[1] is not None else None), x[2] * abs(y[1])
        return (0, None, a[2] * b[2]) if a[0] == 0 and b[0] == 0 else None

    def _divide(self, a, b, fn):
        """a floordiv k or a mod k, k a positive constant: lane 0's value B is a multiple of g and the lanes add
        c*l < c*lanes; the result moves by one step when the lanes stay within one multiple of k, or when k | c."""
        if a is None or b is None:
            return None
        k = b[1] if b[0] == 0 else None
        c, v, g = a
        if c == 0:
            return 0, (fn(v, k) if v is not None and k else None), (gcd(g, k) if fn is mod and k else 1)
        if k is None or k <= 0 or c < 0:
            return None
        span = c * (self.lanes - 1)  # what the last lane adds
        if g % k == 0:  # B = q*k: (B + c*l) // k = q + (c*l) // k and (B + c*l) % k = (c*l) % k
            if span < k:
                return (0, None, g // k) if fn is floordiv else (c, None, 0)
            if c % k == 0 and fn is floordiv:
                return c // k, None, g // k
            return None
        if k % g == 0 and span < g:  # B % k <= k - g, and the lanes add less than g: no multiple of k is crossed
            return (0, None, 1) if fn is floordiv else (c, None, g)
        return None

    def floordiv(self, a, b):
        return self._divide(a, b, floordiv)

    def mod(self, a, b):
        return self._divide(a, b, mod)

    def ceildiv(self, a, b):
        return (0, None, 1) if a is not None and a[0] == 0 else None


def lane_coefficient(e: AffineExpr, d: int, lanes: int) -> int | None:
    """`coefficient` of d in e across one aligned group of `lanes` values of d (LaneCoefficient)."""
    r = evaluate(e, LaneCoefficient(d, lanes))
    return None if r is None else r[0]


def aligned_lanes(e: AffineExpr, d: int, lanes: int) -> bool:
    """Does e take, across one aligned group of `lanes` values of d, the values B .. B + lanes - 1 with B a multiple
    of `lanes` (LaneCoefficient)? Then e < k is the same in every lane wherever `lanes` divides k."""
    r = evaluate(e, LaneCoefficient(d, lanes))
    return r is not None and r[0] == 1 and r[2] % lanes == 0


def uses_dim(e: AffineExpr, d: int) -> bool:
    return d in e.used_dims()


Interval = tuple[Lin, Lin] | None


class LinBounds(Arith[Interval]):
    """[lo, hi] as Lins over a space whose dim d runs over [0, extents[d] - 1] (Lins); None when unknown.
    Dims past the space (data-dependent indices) are unknown."""

    def __init__(self, extents, syms):
        self.extents, self.syms = extents, syms

    def constant(self, value):
        return Lin(value), Lin(value)

    def symbol(self, position):
        s = Lin.of(self.syms[position])
        return s, s

    def dim(self, position):
        if position >= len(self.extents) or self.extents[position] is None:
            return None
        return Lin(0), Lin.of(self.extents[position]) - 1

    def add(self, a, b):
        return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])

    def mul(self, a, b):
        if a is None or b is None:
            return None
        for x, y in ((a, b), (b, a)):
            if y[0] == y[1] and y[0].static:
                k = y[0].const
                return (x[0] * k, x[1] * k) if k >= 0 else (x[1] * k, x[0] * k)
        for x, y in ((a, b), (b, a)):  # [lo, hi] static and non-negative times a non-negative runtime value
            if x[0].static and x[1].static and x[0].const >= 0 and y[0] == y[1] and y[0].nonneg():
                return y[0] * x[0].const, y[0] * x[1].const
        return None

    @staticmethod
    def _divisor(b) -> int | None:
        return b[0].const if b is not None and b[0] == b[1] and b[0].static and b[0].const > 0 else None

    def mod(self, a, b):
        k = self._divisor(b)
        if a is None or k is None:
            return None
        lo, hi = a
        if lo.static and hi.static and lo.const // k == hi.const // k:
            return Lin(lo.const % k), Lin(hi.const % k)
        return Lin(0), Lin(k - 1)

    def _divide(self, fn, a, b):
        k = self._divisor(b)
        if a is None or k is None:
            return None
        lo, hi = a
        lo2 = Lin(fn(lo.const, k)) if lo.static else (Lin(0) if lo.nonneg() else None)
        hi2 = Lin(fn(hi.const, k)) if hi.static else (hi.exact_div(k) if fn is floordiv else None)
        if hi2 is None and fn is floordiv and hi.nonneg() and lo2 is not None:
            hi2 = hi  # x // k <= x for x >= 0
        return (lo2, hi2) if lo2 is not None and hi2 is not None else None

    def floordiv(self, a, b):
        return self._divide(floordiv, a, b)

    def ceildiv(self, a, b):
        return self._divide(ceildiv, a, b)


def interval(e: AffineExpr, extents, syms) -> Interval:
    return evaluate(e, LinBounds(extents, syms))


def within(iv: Interval, size: Lin) -> bool:
    """Whether [lo, hi] lies in [0, size - 1] for every value of the cells."""
    return iv is not None and iv[0].nonneg() and (Lin.of(size) - 1 - iv[1]).nonneg()


def row_major(sizes) -> list[Lin]:
    """Strides of a contiguous buffer of `sizes` (Lins; runtime products raise ValueError)."""
    out, step = [], Lin(1)
    for n in reversed(sizes):
        out.append(step)
        step = step * n
    return out[::-1]


def eval_affine(e: AffineExpr, syms, dims=()) -> int:
    """An affine expression evaluated on ints (floor division and non-negative modulo, as the dialect says)."""
    return e.eval(dims, syms)
