"""The device library every generated Triton file starts with: @triton.jit helpers the op table calls.

Only core `tl` builtins are used (no libdevice), so the same helpers run natively and under
TRITON_INTERPRET=1, whose interpreter has no extern (libdevice) calls. Lane reductions call tl.reduce
with Triton's standard combine functions rather than tl.sum/tl.max: those wrappers are jitted when
Triton is imported, and torch imports Triton before irc can turn the interpreter on; the interpreter
recognises the standard combines and reduces with numpy. Integer division is written so
that it is right whether `//` truncates (Triton) or floors.
"""

PRELUDE = """\
import triton
import triton.language as tl


@triton.jit
def _divsi(a, b):  # C division (toward zero), whatever `//` does
    q = a // b
    r = a - q * b
    return q + ((r != 0) & ((r < 0) != (a < 0))).to(q.dtype)


@triton.jit
def _floordivsi(a, b):
    q = a // b
    r = a - q * b
    return q - ((r != 0) & ((r < 0) != (b < 0))).to(q.dtype)


@triton.jit
def _remsi(a, b):  # sign of the dividend (fmod)
    return a - _divsi(a, b) * b


@triton.jit
def _mod(a, b):  # affine mod: non-negative for a positive divisor
    return ((a % b) + b) % b


@triton.jit
def _round_bf16(x):  # float32 -> the nearest bfloat16 (ties to even), held in float32: Triton's interpreter
    b = x.to(tl.uint32, bitcast=True)  # truncates a cast to bfloat16 where torch and the GPU round to nearest
    r = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return tl.where(x != x, x, r.to(tl.float32, bitcast=True))


@triton.jit
def _maximumf(a, b):  # NaN-propagating
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def _minimumf(a, b):
    return tl.where((a < b) | (a != a), a, b)


@triton.jit
def _maxnumf(a, b):  # NaN only when both are
    return tl.where((a > b) | (b != b), a, b)


@triton.jit
def _minnumf(a, b):
    return tl.where((a < b) | (b != b), a, b)


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _imax(a, b):
    return tl.maximum(a, b)


@triton.jit
def _imin(a, b):
    return tl.minimum(a, b)


@triton.jit
def _or(a, b):
    return a | b


@triton.jit
def _and(a, b):
    return a & b


@triton.jit
def _rsum(x):  # lane reductions over axis 1 through the standard combines: tl.sum & co. without the wrappers
    return tl.reduce(x, 1, tl.standard._sum_combine, keep_dims=True)


@triton.jit
def _rimax(x):
    return tl.reduce(x, 1, tl.standard._elementwise_max, keep_dims=True)


@triton.jit
def _rimin(x):
    return tl.reduce(x, 1, tl.standard._elementwise_min, keep_dims=True)


@triton.jit
def _rmax(x):  # NaN if any lane is (tl.max leaves NaN unspecified natively, the interpreter skips it)
    n = _rimax((x != x).to(tl.int8))
    return tl.where(n > 0, float("nan"), _rimax(x))


@triton.jit
def _rmin(x):
    n = _rimax((x != x).to(tl.int8))
    return tl.where(n > 0, float("nan"), _rimin(x))


@triton.jit
def _rargmax(v, i):  # the first position holding the (NaN-propagating) max
    m = _rmax(v)
    hit = (v == m) | ((v != v) & (m != m))
    return _rimin(tl.where(hit, i, 2**62))


@triton.jit
def _rargmin(v, i):
    m = _rmin(v)
    hit = (v == m) | ((v != v) & (m != m))
    return _rimin(tl.where(hit, i, 2**62))


@triton.jit
def _argmax(av, ai, bv, bi):  # first position on ties; NaN is the largest
    an = av != av
    bn = bv != bv
    a = (an & (~bn | (ai < bi))) | (~an & ~bn & ((av > bv) | ((av == bv) & (ai < bi))))
    return tl.where(a, av, bv), tl.where(a, ai, bi)


@triton.jit
def _argmin(av, ai, bv, bi):
    an = av != av
    bn = bv != bv
    a = (an & (~bn | (ai < bi))) | (~an & ~bn & ((av < bv) | ((av == bv) & (ai < bi))))
    return tl.where(a, av, bv), tl.where(a, ai, bi)


@triton.jit
def _expm1(x):  # Kahan: exact near 0
    u = tl.exp(x)
    d = u - 1.0
    return tl.where(u == 1.0, x, tl.where(d == -1.0, -1.0, tl.where(tl.abs(x) < 0.5, d * x / tl.log(u), d)))


@triton.jit
def _log1p(x):
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * x / (u - 1.0))


@triton.jit
def _tanh(x):
    t = tl.exp(-2.0 * tl.abs(x))
    y = -_expm1(-2.0 * tl.abs(x)) / (1.0 + t)
    return tl.where(x < 0, -y, y)


@triton.jit
def _sinh(x):
    return 0.5 * (_expm1(x) - _expm1(-x))


@triton.jit
def _cosh(x):
    return 0.5 * (tl.exp(x) + tl.exp(-x))


@triton.jit
def _asinh(x):
    a = tl.abs(x)
    y = _log1p(a + a * a / (1.0 + tl.sqrt(1.0 + a * a)))
    return tl.where(x < 0, -y, y)


@triton.jit
def _acosh(x):
    return tl.log(x + tl.sqrt(x * x - 1.0))


@triton.jit
def _atanh(x):
    return 0.5 * _log1p(2.0 * x / (1.0 - x))


@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _round(x):  # half away from zero
    t = _trunc(x)
    d = tl.abs(x - t)
    return tl.where(d >= 0.5, t + tl.where(x < 0, -1.0, 1.0), t)


@triton.jit
def _roundeven(x):
    r = tl.floor(x + 0.5)
    tie = (r - x) == 0.5
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0
    r = tl.where(tie & odd, r - 1.0, r)
    return tl.where(tl.abs(x) >= 4503599627370496.0, x, r)


@triton.jit
def _signbit(x):
    return (x < 0) | ((x == 0) & ((1.0 / x) < 0))


@triton.jit
def _copysign(a, b):
    return tl.where(_signbit(b), -tl.abs(a), tl.abs(a))


@triton.jit
def _cbrt(x):
    y = tl.exp(tl.log(tl.abs(x)) / 3.0)
    return tl.where(x < 0, -y, y)


@triton.jit
def _atan(a):  # Cephes atanf: range reduction to |x| <= tan(pi/8), then an odd polynomial
    x = tl.abs(a)
    big = x > 2.414213562373095
    mid = (x > 0.4142135623730950) & ~big
    y0 = tl.where(big, 1.5707963267948966, tl.where(mid, 0.7853981633974483, 0.0))
    x = tl.where(big, -1.0 / x, tl.where(mid, (x - 1.0) / (x + 1.0), x))
    z = x * x
    p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x
    r = y0 + p
    return tl.where(a < 0, -r, r)


@triton.jit
def _atan2(y, x):
    r = _atan(y / x)
    pi = 3.141592653589793
    r = tl.where(x < 0, tl.where(_signbit(y), r - pi, r + pi), r)
    zero = (x == 0) & (y == 0)
    return tl.where(zero, _copysign(tl.where(_signbit(x), pi, 0.0), y), r)


@triton.jit
def _asin(x):
    return _atan2(x, tl.sqrt((1.0 - x) * (1.0 + x)))


@triton.jit
def _acos(x):
    return _atan2(tl.sqrt((1.0 - x) * (1.0 + x)), x)


@triton.jit
def _powf(a, b):  # torch.pow: negative bases with integral exponents, x**0 == 1, 1**y == 1
    r = tl.exp2(b * tl.log2(tl.abs(a)))
    integral = tl.floor(b) == b
    odd = integral & ((b - 2.0 * tl.floor(b * 0.5)) != 0)
    r = tl.where(a < 0, tl.where(integral, tl.where(odd, -r, r), float("nan")), r)
    return tl.where((b == 0) | (a == 1.0), 1.0, r)


@triton.jit
def _ipowi(a, b):  # exact integer power by squaring over the exponent's bits; a negative exponent as torch's
    r = a * 0 + b * 0 + 1  # kernel gives it: 1 for a base of 1, +-1 for -1 (by the exponent's parity), else 0
    base = a + b * 0
    e = tl.where(b < 0, 0, b)
    for _ in tl.static_range(64):
        r = tl.where((e & 1) != 0, r * base, r)
        base = base * base
        e = e >> 1
    one = r * 0 + 1
    negative = tl.where(a == 1, one, tl.where(a == -1, tl.where((b & 1) != 0, -one, one), one * 0))
    return tl.where(b < 0, negative, r)
"""
