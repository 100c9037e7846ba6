"""Shape-generic llvmlite helpers: one `V` wraps an IRBuilder and a float type, scalar or vector.

Every helper works lane-wise on `float`, `double` or `<N x float|double>` alike, so math routines
are written once and emitted at any width (16 x f32 for AVX-512 bodies, scalar for loop tails).
"""

from __future__ import annotations

from llvmlite import ir

F32, F64 = ir.FloatType(), ir.DoubleType()
I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))


def same_shape(ty, elem):
    """`elem` with the lane count of `ty` (scalar when `ty` is scalar)."""
    return ir.VectorType(elem, ty.count) if isinstance(ty, ir.VectorType) else elem


def mangle(ty) -> str:
    """LLVM's overload suffix: f32, f64, v16f32, i32, v8i1."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{mangle(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return "f64" if isinstance(ty, ir.DoubleType) else "f32"


def intrinsic(module: ir.Module, name: str, ret, args) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(ret, list(args)), name)


class V:
    """Lane-wise emission for one float type. `b` stays the caller's builder (blocks may be added)."""

    def __init__(self, b: ir.IRBuilder, ty):
        self.b, self.ty = b, ty
        self.lanes = ty.count if isinstance(ty, ir.VectorType) else None
        self.elem = ty.element if self.lanes else ty
        assert isinstance(self.elem, (ir.FloatType, ir.DoubleType)), f"not a float type: {ty}"
        self.bits = 64 if isinstance(self.elem, ir.DoubleType) else 32
        self.mant = 52 if self.bits == 64 else 23  # explicit mantissa bits
        self.bias = 1023 if self.bits == 64 else 127
        self.ity = same_shape(ty, ir.IntType(self.bits))
        self.bty = same_shape(ty, I1)

    # constants -------------------------------------------------------------------------------
    def c(self, v: float):
        k = ir.Constant(self.elem, float(v))
        return ir.Constant(self.ty, [k] * self.lanes) if self.lanes else k

    def ci(self, v: int):
        k = ir.Constant(ir.IntType(self.bits), int(v))
        return ir.Constant(self.ity, [k] * self.lanes) if self.lanes else k

    # intrinsics ------------------------------------------------------------------------------
    def call(self, name: str, *args, ty=None):
        ty = ty or self.ty
        fn = intrinsic(self.b.module, f"{name}.{mangle(ty)}", ty, [a.type for a in args])
        return self.b.call(fn, args)

    def fma(self, a, b, c):
        return self.call("llvm.fma", a, b, c)

    def abs(self, x):
        return self.call("llvm.fabs", x)

    def copysign(self, mag, sign):
        return self.call("llvm.copysign", mag, sign)

    def rint(self, x):  # round half to even in the default rounding mode (vrndscaleps)
        return self.call("llvm.rint", x)

    def floor(self, x):
        return self.call("llvm.floor", x)

    def sqrt(self, x):
        return self.call("llvm.sqrt", x)

    def minnum(self, x, y):  # NaN in x gives y: used to clamp before float->int conversions
        return self.call("llvm.minnum", x, y)

    def maxnum(self, x, y):
        return self.call("llvm.maxnum", x, y)

    def clamp(self, x, lo, hi):
        return self.minnum(self.maxnum(x, self.c(lo)), self.c(hi))

    # arithmetic ------------------------------------------------------------------------------
    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def neg(self, x):
        return self.b.fneg(x)

    def poly(self, x, coeffs):
        """Horner with fma, coefficients from the highest power down to the constant term."""
        acc = self.c(coeffs[0])
        for k in coeffs[1:]:
            acc = self.fma(acc, x, self.c(k))
        return acc

    # comparisons and selection (ordered: false when a NaN is involved) -------------------------
    def cmp(self, op: str, x, y):
        return self.b.fcmp_ordered(op, x, y if not isinstance(y, (int, float)) else self.c(y))

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def sel(self, cond, x, y):
        return self.b.select(cond, x, y)

    def any(self, cond):
        """One i1: whether any lane of `cond` is set."""
        if not self.lanes:
            return cond
        fn = intrinsic(self.b.module, f"llvm.vector.reduce.or.{mangle(cond.type)}", I1, [cond.type])
        return self.b.call(fn, [cond])

    # bits ------------------------------------------------------------------------------------
    def to_int_bits(self, x):
        return self.b.bitcast(x, self.ity)

    def from_int_bits(self, i):
        return self.b.bitcast(i, self.ty)

    def to_int(self, x):  # x must be finite and in range: clamp first
        return self.b.fptosi(x, self.ity)

    def to_float(self, i):
        return self.b.sitofp(i, self.ty)

    def pow2i(self, n):
        """2**n for an integer lane value n in [1-bias, bias] (a normal number): build the exponent bits."""
        return self.from_int_bits(self.b.shl(self.b.add(n, self.ci(self.bias)), self.ci(self.mant)))

    def ldexp(self, x, n):
        """x * 2**n for n in [2-2*bias, 2*bias]: two exact power-of-two factors reach the subnormals."""
        half = self.b.ashr(n, self.ci(1))
        return self.mul(self.mul(x, self.pow2i(half)), self.pow2i(self.b.sub(n, half)))

    def scalef(self, x, n):
        """x * 2**floor(n) with AVX-512 vscalefps/pd (exact, overflow and subnormals right), or None
        when the host or the shape has no such instruction. A vector wider than a register (the
        emitter's 64 x f32 bodies: four) is scaled one 512-bit register at a time."""
        from ..runtime.jit import host

        h = host()
        if not self.lanes or not h.has("avx512f"):
            return None
        total = self.lanes * self.bits
        if total > 512 and total % 512 == 0:
            per = 512 // self.bits
            parts = [self._scalef(self._lanes(x, k, per), self._lanes(n, k, per)) for k in range(0, self.lanes, per)]
            while len(parts) > 1:  # concatenate pairwise: shuffles of whole registers, free in the machine code
                parts = [self._concat(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
            return parts[0]
        if total not in (128, 256, 512) or (total < 512 and not h.has("avx512vl")):
            return None
        return self._scalef(x, n)

    def _scalef(self, x, n):
        lanes = x.type.count
        total = lanes * self.bits
        kind = "pd" if self.bits == 64 else "ps"
        tail = [ir.Constant(I32, 4)] if total == 512 else []  # 4: current rounding direction
        args = [x, n, x, ir.Constant(ir.IntType(max(8, lanes)), -1), *tail]
        fn = intrinsic(self.b.module, f"llvm.x86.avx512.mask.scalef.{kind}.{total}", x.type, [a.type for a in args])
        return self.b.call(fn, args)

    def _lanes(self, x, start: int, count: int):
        return self.b.shuffle_vector(x, x, ir.Constant(ir.VectorType(I32, count), list(range(start, start + count))))

    def _concat(self, a, b):
        n = a.type.count
        return self.b.shuffle_vector(a, b, ir.Constant(ir.VectorType(I32, 2 * n), list(range(2 * n))))

    # width changes -----------------------------------------------------------------------------
    def widen(self) -> V:
        return V(self.b, same_shape(self.ty, F64))

    def rare(self, cond, fast, slow_fn):
        """Return `fast`, except lanes where `cond` holds take `slow_fn()`, which runs only if any lane needs it."""
        b = self.b
        before = b.block
        with b.if_then(self.any(cond), likely=False):
            slow = self.sel(cond, slow_fn(), fast)
            slow_end = b.block
        phi = b.phi(self.ty)
        phi.add_incoming(fast, before)
        phi.add_incoming(slow, slow_end)
        return phi

    def libm(self, name: str, *args):
        """Lane-by-lane call of a C math function (used only for cases the polynomials do not cover)."""
        fn = intrinsic(self.b.module, name, self.elem, [self.elem] * len(args))
        if not self.lanes:
            return self.b.call(fn, args)
        out = ir.Constant(self.ty, ir.Undefined)
        for i in range(self.lanes):
            idx = ir.Constant(I32, i)
            lane = self.b.call(fn, [self.b.extract_element(a, idx) for a in args])
            out = self.b.insert_element(out, lane, idx)
        return out
