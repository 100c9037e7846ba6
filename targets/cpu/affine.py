"""Index quantities the CPU target reasons about: linear forms over runtime cells, and the bounds of
affine index maps over an iteration space (what proves a load in bounds, so it needs no guard).

A `Lin` is `const + sum(coef * cell)`: a size, stride, offset or symbol that is either known at compile
time (no terms) or computed from values the runtime writes into numbered cells once per call. Every
cell holds a non-negative value (sizes, strides and size symbols), which is all the proofs assume.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr, AffineSymExpr

K = AffineBinaryOpKind


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
        return self.const + sum(k * cells[c] for c, k in self.terms)

    def cells(self) -> set[int]:
        return {c for c, _ in self.terms}

    def renumber(self, mapping: dict[int, int]) -> Lin:
        return Lin(self.const, tuple((mapping[c], k) for c, k in self.terms))


def _merge(terms):
    acc: dict[int, int] = {}
    for c, k in terms:
        acc[c] = acc.get(c, 0) + k
    return acc.items()


def const_of(e: AffineExpr) -> int | None:
    return e.value if isinstance(e, AffineConstantExpr) else None


def to_lin(e: AffineExpr, syms, dims=()) -> Lin | None:
    """An affine expression of symbols (and of dims given as Lins) as a Lin; None where it is not linear."""
    if isinstance(e, AffineConstantExpr):
        return Lin(e.value)
    if isinstance(e, AffineSymExpr):
        return Lin.of(syms[e.position])
    if isinstance(e, AffineDimExpr):
        return Lin.of(dims[e.position]) if e.position < len(dims) else None
    a, b = to_lin(e.lhs, syms, dims), to_lin(e.rhs, syms, dims)
    if a is None or b is None:
        return None
    if e.kind == K.Add:
        return a + b
    if e.kind == K.Mul:
        return a * b if a.static or b.static else None
    if not (a.static and b.static and b.const > 0):
        if e.kind == K.FloorDiv and b.static:
            return a.exact_div(b.const)
        return None
    x, k = a.const, b.const
    return Lin({K.FloorDiv: x // k, K.CeilDiv: -(-x // k), K.Mod: x % k}[e.kind])


def coefficient(e: AffineExpr, d: int) -> int | None:
    """The constant coefficient of dim d in e (0 when e does not use it); None when e is not linear in d."""
    if isinstance(e, AffineDimExpr):
        return 1 if e.position == d else 0
    if not isinstance(e, AffineBinaryOpExpr):
        return 0
    a, b = coefficient(e.lhs, d), coefficient(e.rhs, d)
    if a is None or b is None:
        return None
    if e.kind == K.Add:
        return a + b
    if e.kind == K.Mul:
        if a == 0 and b == 0:
            return 0
        ka, kb = const_of(e.lhs), const_of(e.rhs)
        if b == 0 and kb is not None:
            return a * kb
        if a == 0 and ka is not None:
            return b * ka
        return None
    return 0 if a == 0 and b == 0 else None


def uses_dim(e: AffineExpr, d: int) -> bool:
    if isinstance(e, AffineDimExpr):
        return e.position == d
    if isinstance(e, AffineBinaryOpExpr):
        return uses_dim(e.lhs, d) or uses_dim(e.rhs, d)
    return False


Interval = tuple[Lin, Lin] | None


def interval(e: AffineExpr, extents, syms) -> Interval:
    """[lo, hi] of e as Lins over a space whose dim d runs over [0, extents[d] - 1] (Lins); None when unknown.
    Dims past the space (data-dependent indices) are unknown."""
    if isinstance(e, AffineConstantExpr):
        return Lin(e.value), Lin(e.value)
    if isinstance(e, AffineSymExpr):
        s = Lin.of(syms[e.position])
        return s, s
    if isinstance(e, AffineDimExpr):
        if e.position >= len(extents) or extents[e.position] is None:
            return None
        return Lin(0), Lin.of(extents[e.position]) - 1
    a, b = interval(e.lhs, extents, syms), interval(e.rhs, extents, syms)
    if a is None or b is None:
        return None
    if e.kind == K.Add:
        return a[0] + b[0], a[1] + b[1]
    if e.kind == K.Mul:
        for x, y in ((a, b), (b, a)):
            if y[0] == y[1] and y[0].static:
                k = y[0].const
                return (x[0] * k, x[1] * k) if k >= 0 else (x[1] * k, x[0] * k)
        for x, y in ((a, b), (b, a)):  # [lo, hi] static and non-negative times a non-negative runtime value
            if x[0].static and x[1].static and x[0].const >= 0 and y[0] == y[1] and y[0].nonneg():
                return y[0] * x[0].const, y[0] * x[1].const
        return None
    if not (b[0] == b[1] and b[0].static and b[0].const > 0):
        return None
    k = b[0].const
    lo, hi = a
    if e.kind == K.Mod:
        if lo.static and hi.static and lo.const // k == hi.const // k:
            return Lin(lo.const % k), Lin(hi.const % k)
        return Lin(0), Lin(k - 1)
    if e.kind in (K.FloorDiv, K.CeilDiv):
        ceil = e.kind == K.CeilDiv
        lo2 = Lin(-(-lo.const // k) if ceil else lo.const // k) if lo.static else (Lin(0) if lo.nonneg() else None)
        hi2 = Lin(-(-hi.const // k) if ceil else hi.const // k) if hi.static else (None if ceil else hi.exact_div(k))
        if hi2 is None and not ceil and hi.nonneg() and lo2 is not None:
            hi2 = hi  # x // k <= x for x >= 0
        return (lo2, hi2) if lo2 is not None and hi2 is not None else None
    return None


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
    if isinstance(e, AffineConstantExpr):
        return e.value
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    a, b = eval_affine(e.lhs, syms, dims), eval_affine(e.rhs, syms, dims)
    if e.kind == K.Add:
        return a + b
    if e.kind == K.Mul:
        return a * b
    if e.kind == K.FloorDiv:
        return a // b
    if e.kind == K.CeilDiv:
        return -(-a // b)
    return a % b
