"""erf, erfc, gelu (both forms), sin and cos for mathlib (see its docstring for the error table).

erf: z + z S(z^2) near 0, 1 - exp(t R(t) - t) beyond (one exp, no division; the constants say how).
erfc and gelu: |z| < 0.5 uses erf(z) = z P(z^2); above, erfc(z) = exp(-z^2) Q(z) with Q fitted in two
pieces (z - 1.5 on [0.5, 2.5], 1/z on [2.5, 10.5]). The coefficients are Lawson (near-minimax)
fits in relative error against mpmath, rounded to float32. exp(-z^2) takes z^2 as an exact
hi + lo pair (fma), so the tail keeps its relative accuracy; gelu feeds it x^2/2 computed from x,
not from the rounded x/sqrt(2), which is what makes its far negative tail accurate.

sin/cos: the reduction x - q pi/2 runs in double with a three-part pi/2 and fma (exact enough for
|x| <= 2^30), then Cephes single-precision polynomials on |r| <= pi/4 pick by quadrant.
"""

from __future__ import annotations

import math

from llvmlite import ir

from .mathlib_core import INF, NAN, _f64_only, _v, exp, exp_of_double

_ERF_SMALL = (
    0.004719968885183334,
    -0.02675817906856537,
    0.11282838135957718,
    -0.37612608075141907,
    0.12837916612625122,
)  # erf(z)/z - 1 in z^2, z in [0, 0.5]: z + z P keeps the leading z exact
_ERFC_A = (
    2.8398069844115525e-05,
    -9.483611211180687e-05,
    0.00021901287254877388,
    -0.0006389331538230181,
    0.0018869817722588778,
    -0.0051560960710048676,
    0.013377564959228039,
    -0.032929107546806335,
    0.07615097612142563,
    -0.16362300515174866,
    0.32158541679382324,
)  # erfc(z) e^(z^2) in z - 1.5
_ERFC_B = (
    -0.004174050875008106,
    0.3843531012535095,
    -0.8458131551742554,
    0.6716305017471313,
    -0.043008264154195786,
    -0.2776705324649811,
    -0.0002497021632734686,
    0.5641955137252808,
)  # z erfc(z) e^(z^2) in 1/z, z in [2.5, 10.5]
# erf alone: erf(x) = x + x S(x^2) for |x| <= _ERF_SPLIT, else 1 - exp(t R(t) - t) with t = |x| (the form of
# N. Juffa's erff: one exp, no division, no erfc pieces, so cheaper than erfc's form). Lawson fits against
# mpmath, S in erf's relative error, R in its absolute error (erfc(t) t dR), rounded to float32.
_ERF_SPLIT = 0.927734375
# erf(t) rounds to 1 in float32 from here on (erfc(4) = 1.5e-8 < 2^-25), and so does the far form: t is clamped to it,
# which changes no result and keeps exp's argument above -17, where unclamped it returned subnormals (a microcode
# assist per vector op: 8x slower on activations of magnitude 8 or more, docs/benchmarks.md)
_ERF_ONE = 4.0
_ERF_NEAR = (
    -0.0005964224110357463,
    0.004988003987818956,
    -0.026763129979372025,
    0.11281721293926239,
    -0.37612485885620117,
    0.12837915122509003,
)
_ERF_FAR = (
    -1.1804188943642657e-05,
    0.0003284895501565188,
    -0.003665364347398281,
    0.023810027167201042,
    -0.10629197210073471,
    -0.6351183652877808,
    -0.1286565065383911,
)
_SINF = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_COSF = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
_PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)  # pi/2 = a + b + c
_TRIG_LIMIT = 2.0**30


def _erf_pieces(b, v, a, s_hi, s_lo, scale=None):
    """(erf(a) by the small polynomial, erfc(a) * scale by the tail) for a >= 0; a^2 = s_hi + s_lo.

    `scale` multiplies the tail before the (possibly subnormal) exp factor, so gelu's x/2 does not
    meet an erfc that has already lost bits to underflow."""
    small = v.fma(a, v.poly(v.mul(a, a), _ERF_SMALL), a)
    ac = v.minnum(a, v.c(10.5))  # beyond: erfc underflows anyway; keeps 1/z and fma finite
    qa = v.poly(v.sub(ac, v.c(1.5)), _ERFC_A)
    t = v.div(v.c(1.0), ac)
    qb = v.div(v.poly(t, _ERFC_B), ac)  # P(1/z)/z: the rounding of t barely moves P
    q = v.sel(v.cmp("<", ac, 2.5), qa, qb)
    m = v.fma(v.neg(q), s_lo, q)  # q exp(-lo) = q (1 - lo) for |lo| <= ulp(hi)/2
    if scale is not None:
        m = v.mul(m, scale)
    return small, v.mul(exp(b, v.neg(s_hi)), m)


def _square(v, a):
    a = v.minnum(a, v.c(10.5))
    hi = v.mul(a, a)
    return hi, v.fma(a, a, v.neg(hi))


def erf(b: ir.IRBuilder, x):
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "erf", x)
    t, s = v.abs(x), v.mul(x, x)
    near = v.fma(v.poly(s, _ERF_NEAR), x, x)
    t = v.minnum(t, v.c(_ERF_ONE))  # the far form's t (the near form is not selected there); NaN selected below
    s = v.mul(t, t)
    c = _ERF_FAR  # R(t) in two halves at once (t^3 and t^2 terms via s = t^2), then Horner: a shorter chain
    r = v.fma(v.fma(v.c(c[0]), t, v.c(c[1])), s, v.fma(v.c(c[2]), t, v.c(c[3])))
    for k in c[4:]:
        r = v.fma(r, t, v.c(k))
    far = v.copysign(v.sub(v.c(1.0), exp(b, v.fma(r, t, v.neg(t)))), x)
    y = v.sel(v.cmp(">", t, _ERF_SPLIT), far, near)
    return v.sel(v.isnan(x), x, y)


def erfc(b: ir.IRBuilder, x):
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "erfc", x)
    a = v.abs(x)
    small, tail = _erf_pieces(b, v, a, *_square(v, a))
    pos = v.sel(v.cmp("<", a, 0.5), v.sub(v.c(1.0), small), tail)
    y = v.sel(v.cmp("<", x, 0.0), v.sub(v.c(2.0), pos), pos)
    return v.sel(v.isnan(x), x, y)


def gelu(b: ir.IRBuilder, x):
    """x Phi(x) = x/2 (1 + erf(x/sqrt2)) for x >= 0 and x/2 erfc(|x|/sqrt2) below; gelu(-inf) = NaN as in torch."""
    v = _v(b, x)
    if v.bits == 64:
        half = v.mul(v.c(0.5), x)
        return v.mul(half, v.add(v.c(1.0), erf(b, v.mul(x, v.c(math.sqrt(0.5))))))
    a = v.minnum(v.abs(x), v.c(15.0))
    z = v.mul(a, v.c(math.sqrt(0.5)))
    hi = v.mul(a, a)
    lo = v.fma(a, a, v.neg(hi))
    half_x = v.mul(x, v.c(0.5))
    half_xc = v.mul(v.copysign(a, x), v.c(0.5))  # finite: the tail is 0 beyond |x| = 15 anyway
    small, tail = _erf_pieces(b, v, z, v.mul(hi, v.c(0.5)), v.mul(lo, v.c(0.5)), scale=half_xc)
    below = v.cmp("<", z, 0.5)
    # x >= 0: x/2 (2 - erfc) = x - tail (tail carries x/2); x < 0: x/2 erfc = tail
    pos = v.sel(below, v.fma(half_x, small, half_x), v.sub(x, tail))
    neg = v.sel(below, v.fma(v.neg(half_x), small, half_x), tail)
    y = v.sel(v.cmp(">=", x, 0.0), pos, neg)
    y = v.sel(v.cmp("==", x, -INF), v.c(NAN), y)
    return v.sel(v.isnan(x), x, y)


def gelu_tanh(b: ir.IRBuilder, x):
    """x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): no cancellation for x < 0."""
    v = _v(b, x)
    if v.bits == 64:
        u = v.mul(v.mul(x, v.c(math.sqrt(2.0 / math.pi))), v.fma(v.mul(x, x), v.c(0.044715), v.c(1.0)))
        return v.mul(v.mul(v.c(0.5), x), v.add(v.c(1.0), v.libm("tanh", u)))
    # 2u in double: in float its rounding (and that of the constants) costs ~1.5|2u| ulp in the tail
    w = v.widen()
    xd = b.fpext(x, w.ty)
    u2 = w.mul(w.mul(xd, w.c(2.0 * math.sqrt(2.0 / math.pi))), w.fma(w.mul(xd, xd), w.c(0.044715), w.c(1.0)))
    # sigmoid inlined so that x multiplies before the subnormal exp factor: x e / (1 + e) for x < 0
    big_e = exp_of_double(b, w.neg(w.abs(u2)), v.ty, scale_log2=64)  # e 2^64: normal where the result is not
    e = v.mul(big_e, v.c(2.0**-64))
    den = v.add(v.c(1.0), e)
    y = v.sel(v.cmp(">=", x, 0.0), v.div(x, den), v.mul(v.div(v.mul(x, big_e), den), v.c(2.0**-64)))
    return v.sel(v.cmp("==", x, -INF), v.c(NAN), y)


def _sincos(b: ir.IRBuilder, x, want_cos: bool):
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "cos" if want_cos else "sin", x)
    w = v.widen()
    big = v.b.not_(v.cmp("<=", v.abs(x), _TRIG_LIMIT))  # also inf and NaN
    xs = v.sel(big, v.c(0.0), x)  # no NaN/huge lanes in the fast path: its int conversions stay defined
    xd = w.b.fpext(xs, w.ty)
    q = w.rint(w.mul(xd, w.c(2.0 / math.pi)))
    r = xd
    for part in _PIO2:
        r = w.fma(w.neg(q), w.c(part), r)
    rf = v.b.fptrunc(r, v.ty)
    qi = v.b.trunc(w.to_int(q), v.ity)
    z = v.mul(rf, rf)
    s = v.fma(v.mul(v.poly(z, _SINF), z), rf, rf)
    c = v.fma(v.mul(v.poly(z, _COSF), z), z, v.fma(z, v.c(-0.5), v.c(1.0)))
    if want_cos:
        qi = v.b.add(qi, v.ci(1))  # cos(r + k pi/2) = sin(r + (k+1) pi/2)
    odd = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(1)), v.ci(0))
    neg = v.b.icmp_signed("!=", v.b.and_(qi, v.ci(2)), v.ci(0))
    y = v.sel(odd, c, s)
    y = v.sel(neg, v.neg(y), y)
    if not want_cos:
        y = v.sel(v.cmp("==", x, 0.0), x, y)  # sin(-0) = -0
    name = "cos" if want_cos else "sin"
    return v.rare(big, y, lambda: v.b.fptrunc(w.libm(name, v.b.fpext(x, w.ty)), v.ty))


def sin(b: ir.IRBuilder, x):
    return _sincos(b, x, want_cos=False)


def cos(b: ir.IRBuilder, x):
    return _sincos(b, x, want_cos=True)
