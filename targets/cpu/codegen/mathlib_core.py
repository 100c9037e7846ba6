"""exp, log, pow, rsqrt, tanh and sigmoid for mathlib (see its docstring for the error table)."""

from __future__ import annotations

import math

from llvmlite import ir

from .vec import I16, V, intrinsic, same_shape

LN2 = math.log(2.0)
LOG2E = 1.0 / LN2
INF, NAN = float("inf"), float("nan")

# Cephes expf / exp (rational form for double): exp(r) on |r| <= ln2/2.
_EXPF = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
_EXP_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXP_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1, 2.0)
# Cody-Waite ln2 splits: n*hi is exact for the n that occur.
_LN2F = (0.693359375, -2.12194440e-4)
_LN2D = (6.93145751953125e-1, 1.42860682030941723212e-6)
# Cephes logf / log: log(1+f) for 1+f in [sqrt(.5), sqrt(2)).
_LOGF = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)
_LOG_P = (
    1.01875663804580931796e-4,
    4.97494994976747001425e-1,
    4.70579119878881725854e0,
    1.44989225341610930846e1,
    1.79368678507819816313e1,
    7.70838733755885391666e0,
)
_LOG_Q = (
    1.0,
    1.12873587189167450590e1,
    4.52279145837532221105e1,
    8.29875266912776603211e1,
    7.11544750618563894466e1,
    2.31251620126765340583e1,
)
_TANHF = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1)


def _v(b, x) -> V:
    return V(b, x.type)


def _f64_only(v: V, name: str, x, *rest):
    # A double lane gets libm: the float polynomials are not accurate enough for it.
    return v.libm(name, x, *rest)


# exp family -------------------------------------------------------------------------------------
def _exp_reduced(v: V, n, r):
    """exp(r) * 2**n for |r| <= ln2/2 and integral float n in the clamped range."""
    if v.bits == 32:
        p = v.fma(v.poly(r, _EXPF), v.mul(r, r), v.add(r, v.c(1.0)))
    else:  # Cephes exp: 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))
        rr = v.mul(r, r)
        px = v.mul(r, v.poly(rr, _EXP_P))
        p = v.fma(v.c(2.0), v.div(px, v.sub(v.poly(rr, _EXP_Q), px)), v.c(1.0))
    return v.scalef(p, n) or v.ldexp(p, v.to_int(n))


def _exp_limits(v: V):
    # Beyond these the result is inf or 0 for sure; clamping also turns NaN into a number (no poison).
    return (-104.0, 89.0) if v.bits == 32 else (-746.0, 710.0)


def exp(b: ir.IRBuilder, x, scale_log2: int = 0):
    """e^x; with scale_log2 = k >= 0, e^x 2^k exactly (k joins the exponent), so a caller can keep
    the bits of a result that would be subnormal and scale back after further products."""
    v = _v(b, x)
    lo, hi = _exp_limits(v)
    xc = v.clamp(x, lo - scale_log2 * LN2, hi)
    n = v.rint(v.mul(xc, v.c(LOG2E)))
    hi_, lo_ = _LN2F if v.bits == 32 else _LN2D
    r = v.fma(n, v.c(-lo_), v.fma(n, v.c(-hi_), xc))
    if scale_log2:
        n = v.add(n, v.c(scale_log2))
    return v.sel(v.isnan(x), x, _exp_reduced(v, n, r))


def exp_of_double(b: ir.IRBuilder, t, ty, scale_log2: int = 0):
    """e^t 2^k as float lanes `ty` for a double argument t: the reduction runs in double, the
    polynomial in float. For arguments a float could not hold exactly (gelu_tanh's 2u)."""
    w, v = _v(b, t), V(b, ty)
    tc = w.clamp(t, -104.0 - scale_log2 * LN2, 89.0)
    n = w.rint(w.mul(tc, w.c(LOG2E)))
    r = w.fma(n, w.c(-_LN2D[1]), w.fma(n, w.c(-_LN2D[0]), tc))
    n = b.fptrunc(n, ty)
    if scale_log2:
        n = v.add(n, v.c(scale_log2))
    return _exp_reduced(v, n, b.fptrunc(r, ty))


def exp2(b: ir.IRBuilder, x):
    v = _v(b, x)
    xc = v.clamp(x, -152.0, 129.0) if v.bits == 32 else v.clamp(x, -1076.0, 1025.0)
    n = v.rint(xc)
    r = v.mul(v.sub(xc, n), v.c(LN2))  # x - n is exact; one rounding in the product
    return v.sel(v.isnan(x), x, _exp_reduced(v, n, r))


def expm1(b: ir.IRBuilder, x):
    """2^n (e^r - 1) + (2^n - 1), written as 2 (t em + (t - 1/2)) with t = 2^(n-1) so n = 128 cannot overflow t."""
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "expm1", x)
    xc = v.clamp(x, -18.0, 89.0)
    n = v.rint(v.mul(xc, v.c(LOG2E)))
    r = v.fma(n, v.c(-_LN2F[1]), v.fma(n, v.c(-_LN2F[0]), xc))
    em = v.fma(v.poly(r, _EXPF), v.mul(r, r), r)
    t = v.pow2i(v.b.sub(v.to_int(n), v.ci(1)))
    y = v.mul(v.c(2.0), v.fma(t, em, v.sub(t, v.c(0.5))))
    y = v.sel(v.cmp("<", v.abs(x), 2.0**-25), x, y)  # expm1(x) rounds to x there; keeps -0 and subnormals
    return v.sel(v.isnan(x), x, y)


# log family -------------------------------------------------------------------------------------
def log(b: ir.IRBuilder, x):
    v = _v(b, x)
    tiny = 2.0 ** (1 - v.bias)
    sub = v.cmp("<", x, tiny)  # subnormal (or zero/negative: fixed below): scale into the normals
    xs = v.sel(sub, v.mul(x, v.c(2.0**v.mant)), x)
    bits = v.to_int_bits(xs)
    e = v.b.sub(v.b.ashr(bits, v.ci(v.mant)), v.ci(v.bias - 1))  # x = m 2^e, m in [0.5, 1)
    e = v.b.sub(e, v.b.select(sub, v.ci(v.mant), v.ci(0)))
    mant_mask = (1 << v.mant) - 1
    m = v.from_int_bits(v.b.or_(v.b.and_(bits, v.ci(mant_mask)), v.ci((v.bias - 1) << v.mant)))
    low = v.cmp("<", m, math.sqrt(0.5))
    e = v.b.sub(e, v.b.select(low, v.ci(1), v.ci(0)))
    f = v.sub(v.sel(low, v.add(m, m), m), v.c(1.0))  # exact (Sterbenz)
    fe = v.to_float(e)
    z = v.mul(f, f)
    if v.bits == 32:
        y = v.mul(v.mul(f, z), v.poly(f, _LOGF))
    else:
        y = v.mul(v.mul(f, z), v.div(v.poly(f, _LOG_P), v.poly(f, _LOG_Q)))
    hi_, lo_ = _LN2F if v.bits == 32 else (0.693359375, -2.121944400546905827679e-4)
    y = v.fma(fe, v.c(lo_), y)
    y = v.fma(z, v.c(-0.5), y)
    r = v.fma(fe, v.c(hi_), v.add(f, y))
    r = v.sel(v.cmp("==", x, INF), x, r)
    r = v.sel(v.cmp("<", x, 0.0), v.c(NAN), r)
    r = v.sel(v.cmp("==", x, 0.0), v.c(-INF), r)
    return v.sel(v.isnan(x), x, r)


def log2(b: ir.IRBuilder, x):
    v = _v(b, x)
    return v.mul(log(b, x), v.c(LOG2E))


def log10(b: ir.IRBuilder, x):
    v = _v(b, x)
    return v.mul(log(b, x), v.c(1.0 / math.log(10.0)))


def log1p(b: ir.IRBuilder, x):
    """Goldberg: log(u) * x / (u - 1) with u = 1 + x corrects the rounding of u; u == 1 gives x."""
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "log1p", x)
    u = v.add(x, v.c(1.0))
    y = v.mul(log(b, u), v.div(x, v.sub(u, v.c(1.0))))
    y = v.sel(v.cmp("==", u, 1.0), x, y)
    y = v.sel(v.cmp("==", x, INF), x, y)
    y = v.sel(v.cmp("==", x, -1.0), v.c(-INF), y)
    return v.sel(v.isnan(x), x, y)


# pow ---------------------------------------------------------------------------------------------
def pow(b: ir.IRBuilder, x, y):
    """C99 pow: exp(y log|x|) in double (so |y log x| up to 745 keeps float accuracy), then the signs.

    pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; a negative finite x with a finite non-integer y is
    NaN; a negative x with an odd integer y gives a negative result (-0 counts as negative)."""
    v = _v(b, x)
    w = v.widen()
    ax = v.abs(x)
    xd = w.b.fpext(ax, w.ty) if v.bits == 32 else ax
    yd = w.b.fpext(y, w.ty) if v.bits == 32 else y
    r = exp(b, w.mul(yd, log(b, xd)))
    r = w.b.fptrunc(r, v.ty) if v.bits == 32 else r
    # integer and odd-integer tests on y; |y| >= 2^mant is always even
    yi = v.sel(v.cmp("<", v.abs(y), 2.0**v.mant), y, v.c(0.0))
    is_int = v.cmp("==", v.floor(y), y)
    odd = v.b.trunc(v.to_int(yi), same_shape(v.ty, ir.IntType(1)))
    odd = v.b.and_(odd, v.cmp("==", v.floor(yi), yi))
    neg_x = v.b.icmp_signed("<", v.to_int_bits(x), v.ci(0))  # sign bit: -0 and -inf too
    r = v.sel(v.b.and_(neg_x, odd), v.neg(r), r)
    finite_neg = v.b.and_(v.cmp("<", x, 0.0), v.cmp(">", x, -INF))
    y_fin_frac = v.b.and_(v.b.not_(is_int), v.cmp("<", v.abs(y), INF))
    r = v.sel(v.b.and_(finite_neg, y_fin_frac), v.c(NAN), r)
    r = v.sel(v.b.and_(v.cmp("==", ax, 1.0), v.cmp("==", v.abs(y), INF)), v.c(1.0), r)  # (±1)^±inf
    r = v.sel(v.b.or_(v.isnan(x), v.isnan(y)), v.add(x, y), r)
    return v.sel(v.b.or_(v.cmp("==", y, 0.0), v.cmp("==", x, 1.0)), v.c(1.0), r)


# square roots ------------------------------------------------------------------------------------
def rsqrt(b: ir.IRBuilder, x):
    """AVX-512 rsqrt14 (14 bits) plus one Newton step; elsewhere 1/sqrt(x) (<= 1 ulp, slower)."""
    v = _v(b, x)
    if _rsqrt14(v, x) is None:
        return v.div(v.c(1.0), v.sqrt(x))
    # rsqrt14 is coarse on subnormals: scale them by 2^24 and the result by 2^12
    sub = v.cmp("<", v.abs(x), 2.0**-100)  # and x/2 below must stay normal
    xs = v.sel(sub, v.mul(x, v.c(2.0**24)), x)
    est = _rsqrt14(v, xs)
    h = v.mul(xs, v.c(0.5))
    y = v.mul(est, v.fma(v.neg(v.mul(h, est)), est, v.c(1.5)))
    keep = v.b.or_(v.cmp("==", v.abs(est), INF), v.cmp("==", est, 0.0))  # 0 -> inf, inf -> 0: no 0*inf
    y = v.sel(keep, est, y)
    return v.sel(sub, v.mul(y, v.c(2.0**12)), y)


def _rsqrt14(v: V, x):
    from ..runtime.jit import host

    widths = {16: (512, I16), 8: (256, ir.IntType(8)), 4: (128, ir.IntType(8))}
    if v.bits != 32 or v.lanes not in widths or not host().has("avx512f"):
        return None
    bits, mty = widths[v.lanes]
    if bits < 512 and not host().has("avx512vl"):
        return None
    fn = intrinsic(v.b.module, f"llvm.x86.avx512.rsqrt14.ps.{bits}", v.ty, [v.ty, v.ty, mty])
    return v.b.call(fn, [x, v.c(0.0), ir.Constant(mty, -1)])


# hyperbolic and logistic -------------------------------------------------------------------------
def tanh(b: ir.IRBuilder, x):
    """|x| < 0.625: Cephes odd polynomial; else 1 - 2/(e^(2|x|) + 1); the sign from x (keeps -0)."""
    v = _v(b, x)
    if v.bits == 64:
        return _f64_only(v, "tanh", x)
    a = v.abs(x)
    z = v.mul(a, a)
    small = v.fma(v.mul(a, z), v.poly(z, _TANHF), a)
    e = exp(b, v.add(a, a))
    large = v.sub(v.c(1.0), v.div(v.c(2.0), v.add(e, v.c(1.0))))
    y = v.copysign(v.sel(v.cmp("<", a, 0.625), small, large), x)
    return v.sel(v.isnan(x), x, y)


def sigmoid(b: ir.IRBuilder, x):
    """e = exp(-|x|); 1/(1+e) for x >= 0, e/(1+e) below, so the far negative tail keeps its precision."""
    v = _v(b, x)
    e = exp(b, v.neg(v.abs(x)))
    return v.div(v.sel(v.cmp(">=", x, 0.0), v.c(1.0), e), v.add(v.c(1.0), e))
