"""The CPU target's scalar op table: xDSL arith/math op class -> llvmlite IRBuilder code.

Why llvmlite directly: xDSL 0.74 has no arith/memref -> llvm lowering that reaches executable code
(its llvm dialect cannot be handed to MCJIT without mlir-translate), so the target emits LLVM IR with
llvmlite's IRBuilder. The table (EMIT) has one entry per op class, so an op's code is in one place and
adding an op is adding an entry; an op without one is Unsupported, and its kernel runs on the reference
evaluator.

Every entry is `fn(cx, op, *operands) -> value`, where the operands are LLVM values already of one
shape (all scalar, or all `<W x T>` vectors: the emitter broadcasts uniform operands) and `cx` is a
`Cx` (the builder, the width, type and constant helpers). Entries work lane-wise at any width, so one
table serves vector bodies and scalar tails. Compute types: f16 and bf16 compute in f32 (loads widen,
stores and explicit casts round), i1 is a bool, index is i64; the semantics are the reference
evaluator's (dialects/semantics/scalar.py SCALAR), including its integer corner cases (division by
zero and out-of-range shifts never trap or go undefined).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float64Type

from . import mathlib
from .types import (
    HALF,
    Unsupported,
    compute_type,
    const_value,
    exact_constant,
    is_float,
    narrow,
    round_to,
    splat,
    storage_type,
    widen,
)
from .vec import F32, F64, I1, I64, V, intrinsic, mangle, same_shape


# -- the emission context -------------------------------------------------------------------------------
class Cx:
    """What table entries see: the builder and the lane count (None for scalar code)."""

    def __init__(self, b: ir.IRBuilder, width: int | None):
        self.b, self.width = b, width

    def ty(self, t) -> ir.Type:
        s = compute_type(t)
        return ir.VectorType(s, self.width) if self.width else s

    def const(self, value, t):
        s = compute_type(t)
        v = exact_constant(value, t)
        k = ir.Constant(s, float(v) if is_float(t) else int(v))
        return ir.Constant(ir.VectorType(s, self.width), [k] * self.width) if self.width else k

    def call(self, name: str, *args, ty=None):
        ty = ty or args[0].type
        fn = intrinsic(self.b.module, f"{name}.{mangle(ty)}", ty, [a.type for a in args])
        return self.b.call(fn, args)

    def math(self, name: str, *args):
        return mathlib.FUNCTIONS[name](self.b, *args)

    def libm(self, name: str, *args):
        v = V(self.b, args[0].type)
        return v.libm(name if v.bits == 64 else name + "f", *args)


def _k(x, v):
    return splat(x.type, v)


# -- integer helpers: never trap, never undefined ------------------------------------------------------
def _safe_divisor(cx, a, d):
    """(a', d') with d' != 0 and no INT_MIN / -1 overflow; the result for a zero divisor is unspecified."""
    b = cx.b
    zero = b.icmp_signed("==", d, _k(d, 0))
    d = b.select(zero, _k(d, 1), d)
    width = _width(d)
    if width > 1:
        ovf = b.and_(b.icmp_signed("==", d, _k(d, -1)), b.icmp_signed("==", a, _k(a, -(1 << (width - 1)))))
        d = b.select(ovf, _k(d, 1), d)
    return a, d


def _sdiv(cx, op, a, d):
    a, d = _safe_divisor(cx, a, d)
    return cx.b.sdiv(a, d)


def _srem(cx, op, a, d):
    a, d = _safe_divisor(cx, a, d)
    return cx.b.srem(a, d)


def _udiv(cx, op, a, d):
    d = cx.b.select(cx.b.icmp_unsigned("==", d, _k(d, 0)), _k(d, 1), d)
    return cx.b.udiv(a, d)


def _urem(cx, op, a, d):
    d = cx.b.select(cx.b.icmp_unsigned("==", d, _k(d, 0)), _k(d, 1), d)
    return cx.b.urem(a, d)


def _floordiv(cx, op, a, d):
    b = cx.b
    a, d = _safe_divisor(cx, a, d)
    q, r = b.sdiv(a, d), b.srem(a, d)
    adjust = b.and_(b.icmp_signed("!=", r, _k(r, 0)), b.icmp_signed("<", b.xor(r, d), _k(r, 0)))
    return b.sub(q, b.zext(adjust, q.type))


def _ceildiv(cx, op, a, d):
    b = cx.b
    return b.neg(_floordiv(cx, op, b.neg(a), d))


def _width(x) -> int:
    return x.type.element.width if isinstance(x.type, ir.VectorType) else x.type.width


def _shift(kind):
    def emit(cx, op, a, s):
        b, w = cx.b, _width(a)
        bad = b.icmp_unsigned(">=", s, _k(s, w))  # negative amounts are huge unsigned
        safe = b.select(bad, _k(s, 0), s)
        if kind == "shl":
            return b.select(bad, _k(a, 0), b.shl(a, safe))
        if kind == "lshr":
            return b.select(bad, _k(a, 0), b.lshr(a, safe))
        return b.ashr(a, b.select(bad, _k(s, w - 1), s))

    return emit


def _ipow(cx, op, base, e):
    """Integer power by square-and-multiply over the exponent's bits; negative exponents as torch (0, or +-1).
    Vectors run every bit (lanes share no branch); a scalar loops while bits remain: the same chain unrolled over
    64 bits is more straight-line code than LLVM's optimiser gets through in reasonable time (a 0-d int64 `a ** b`
    the fuzzer found hung the compile)."""
    b, w = cx.b, _width(base)
    neg = b.icmp_signed("<", e, _k(e, 0))
    if isinstance(base.type, ir.VectorType):
        acc, sq, k = _k(base, 1), base, e
        for _ in range(w):
            bit = b.trunc(b.and_(k, _k(k, 1)), same_shape(k.type, I1))
            acc = b.select(bit, b.mul(acc, sq), acc)
            sq, k = b.mul(sq, sq), b.lshr(k, _k(k, 1))
    else:
        acc = _ipow_loop(b, base, e)
    one = b.icmp_signed("==", base, _k(base, 1))
    minus = b.icmp_signed("==", base, _k(base, -1))
    odd = b.trunc(b.and_(e, _k(e, 1)), same_shape(e.type, I1))
    negval = b.select(one, _k(base, 1), b.select(minus, b.select(odd, _k(base, -1), _k(base, 1)), _k(base, 0)))
    return b.select(neg, negval, acc)


def _ipow_loop(b, base, e):
    """base ** e for a non-negative e (any e terminates: e is shifted as unsigned), as a loop over e's bits."""
    pre, fn = b.block, b.function
    head, body, done = (fn.append_basic_block(f"ipow.{n}") for n in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    acc, sq, k = b.phi(base.type), b.phi(base.type), b.phi(e.type)
    acc.add_incoming(_k(base, 1), pre)
    sq.add_incoming(base, pre)
    k.add_incoming(e, pre)
    b.cbranch(b.icmp_unsigned("!=", k, _k(k, 0)), body, done)
    b.position_at_end(body)
    bit = b.trunc(b.and_(k, _k(k, 1)), I1)
    acc.add_incoming(b.select(bit, b.mul(acc, sq), acc), body)
    sq.add_incoming(b.mul(sq, sq), body)
    k.add_incoming(b.lshr(k, _k(k, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    return acc


# -- comparisons and casts ------------------------------------------------------------------------------
_FCMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _cmpf(cx, op, a, c):
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    b = cx.b
    if pred in ("false", "true"):
        t = same_shape(a.type, I1)
        return splat(t, 1 if pred == "true" else 0)
    if pred in ("ord", "uno"):
        return b.fcmp_ordered("ord", a, c) if pred == "ord" else b.fcmp_unordered("uno", a, c)
    rel = _FCMP[pred[1:]]
    return b.fcmp_ordered(rel, a, c) if pred[0] == "o" else b.fcmp_unordered(rel, a, c)


def _cmpi(cx, op, a, c):
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    rel = _FCMP[pred[1:] if pred[0] in "su" else pred]
    if pred[0] == "u" or _width(a) == 1:  # bools compare as 0 < 1
        return cx.b.icmp_unsigned(rel, a, c)
    return cx.b.icmp_signed(rel, a, c)


def _int_to_float(signed):
    def emit(cx, op, x):
        t = op.result.type
        storage = same_shape(x.type, HALF if isinstance(t, Float16Type) else compute_type(t))
        y = cx.b.sitofp(x, storage) if signed and _width(x) > 1 else cx.b.uitofp(x, storage)
        return cx.b.fpext(y, cx.ty(t)) if isinstance(t, Float16Type) else round_to(cx.b, y, t)

    return emit


def _float_to_int(signed):
    def emit(cx, op, x):
        ty = cx.ty(op.result.type)
        if _width_t(ty) == 1:  # float -> bool: nonzero (NaN too)
            return cx.b.fcmp_unordered("!=", x, _k(x, 0.0))
        return cx.b.fptosi(x, ty) if signed else cx.b.fptoui(x, ty)

    return emit


def _width_t(ty) -> int:
    e = ty.element if isinstance(ty, ir.VectorType) else ty
    return e.width if isinstance(e, ir.IntType) else 0


def _extf(cx, op, x):
    ty = cx.ty(op.result.type)
    return x if x.type == ty else cx.b.fpext(x, ty)


def _truncf(cx, op, x):
    t, b = op.result.type, cx.b
    if isinstance(t, Float16Type) and isinstance(op.input.type, Float64Type):
        return b.fpext(b.fptrunc(x, same_shape(x.type, HALF)), cx.ty(t))
    y = x if x.type == cx.ty(t) else b.fptrunc(x, cx.ty(t))
    return round_to(b, y, t)


def _int_resize(signed):
    def emit(cx, op, x):
        ty = cx.ty(op.result.type)
        wi, wo = _width(x), _width_t(ty)
        if wi == wo:
            return x
        if wo < wi:
            return cx.b.trunc(x, ty)
        return cx.b.sext(x, ty) if signed and wi > 1 else cx.b.zext(x, ty)

    return emit


def _index_cast(cx, op, x):
    ty = cx.ty(op.result.type)
    wi, wo = _width(x), _width_t(ty)
    if wi == wo:
        return x
    return cx.b.trunc(x, ty) if wo < wi else (cx.b.sext(x, ty) if wi > 1 else cx.b.zext(x, ty))


def _bitcast(cx, op, x):
    src, dst, b = op.input.type, op.result.type, cx.b
    bits = narrow(b, x, src) if isinstance(src, Float16Type | BFloat16Type) else x
    target = same_shape(x.type, storage_type(dst) if isinstance(dst, Float16Type | BFloat16Type) else compute_type(dst))
    return widen(b, b.bitcast(bits, target), dst)


def _select(cx, op, c, a, d):
    return cx.b.select(c, a, d)


def _const(cx, op):
    return cx.const(const_value(op), op.result.type)


# -- math ----------------------------------------------------------------------------------------------
def _lib(name):
    return lambda cx, op, *xs: cx.math(name, *xs)


def _libm(name):
    return lambda cx, op, *xs: cx.libm(name, *xs)


def _cbrt(cx, op, x):
    v = V(cx.b, x.type)
    y = cx.math("pow", v.abs(x), v.c(1.0 / 3.0))
    return v.copysign(y, x)


def _fpowi(cx, op, x, n):
    return cx.math("pow", x, cx.b.sitofp(n, x.type))


_F = {arith.AddfOp: "fadd", arith.SubfOp: "fsub", arith.MulfOp: "fmul", arith.DivfOp: "fdiv",
      arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul",
      arith.AndIOp: "and_", arith.OrIOp: "or_", arith.XOrIOp: "xor"}  # fmt: skip

EMIT: dict[type, object] = {
    **{cls: (lambda name: lambda cx, op, a, c: getattr(cx.b, name)(a, c))(name) for cls, name in _F.items()},
    arith.ConstantOp: _const,
    arith.NegfOp: lambda cx, op, x: cx.b.fneg(x),
    arith.MaximumfOp: lambda cx, op, a, c: cx.call("llvm.maximum", a, c),
    arith.MinimumfOp: lambda cx, op, a, c: cx.call("llvm.minimum", a, c),
    arith.MaxnumfOp: lambda cx, op, a, c: cx.call("llvm.maxnum", a, c),
    arith.MinnumfOp: lambda cx, op, a, c: cx.call("llvm.minnum", a, c),
    arith.DivSIOp: _sdiv, arith.RemSIOp: _srem, arith.DivUIOp: _udiv, arith.RemUIOp: _urem,
    arith.FloorDivSIOp: _floordiv, arith.CeilDivSIOp: _ceildiv,
    arith.MaxSIOp: lambda cx, op, a, c: cx.call("llvm.smax", a, c),
    arith.MinSIOp: lambda cx, op, a, c: cx.call("llvm.smin", a, c),
    arith.MaxUIOp: lambda cx, op, a, c: cx.call("llvm.umax", a, c),
    arith.MinUIOp: lambda cx, op, a, c: cx.call("llvm.umin", a, c),
    arith.ShLIOp: _shift("shl"), arith.ShRUIOp: _shift("lshr"), arith.ShRSIOp: _shift("ashr"),
    arith.CmpfOp: _cmpf, arith.CmpiOp: _cmpi, arith.SelectOp: _select,
    arith.SIToFPOp: _int_to_float(True), arith.UIToFPOp: _int_to_float(False),
    arith.FPToSIOp: _float_to_int(True), arith.FPToUIOp: _float_to_int(False),
    arith.ExtFOp: _extf, arith.TruncFOp: _truncf,
    arith.ExtSIOp: _int_resize(True), arith.ExtUIOp: _int_resize(False), arith.TruncIOp: _int_resize(False),
    arith.IndexCastOp: _index_cast, arith.BitcastOp: _bitcast,
    math.AbsFOp: lambda cx, op, x: cx.call("llvm.fabs", x),
    math.AbsIOp: lambda cx, op, x: cx.call("llvm.abs", x, ir.Constant(I1, 0)),
    math.FloorOp: lambda cx, op, x: cx.call("llvm.floor", x),
    math.CeilOp: lambda cx, op, x: cx.call("llvm.ceil", x),
    math.TruncOp: lambda cx, op, x: cx.call("llvm.trunc", x),
    math.RoundOp: lambda cx, op, x: cx.call("llvm.round", x),
    math.RoundEvenOp: lambda cx, op, x: cx.call("llvm.rint", x),
    math.SqrtOp: lambda cx, op, x: cx.call("llvm.sqrt", x),
    math.CopySignOp: lambda cx, op, a, c: cx.call("llvm.copysign", a, c),
    math.FmaOp: lambda cx, op, a, c, d: cx.call("llvm.fma", a, c, d),
    math.CtPopOp: lambda cx, op, x: cx.call("llvm.ctpop", x),
    math.ExpOp: _lib("exp"), math.Exp2Op: _lib("exp2"), math.ExpM1Op: _lib("expm1"),
    math.LogOp: _lib("log"), math.Log2Op: _lib("log2"), math.Log10Op: _lib("log10"), math.Log1pOp: _lib("log1p"),
    math.TanhOp: _lib("tanh"), math.ErfOp: _lib("erf"), math.SinOp: _lib("sin"), math.CosOp: _lib("cos"),
    math.RsqrtOp: _lib("rsqrt"), math.PowFOp: _lib("pow"), math.CbrtOp: _cbrt, math.FPowIOp: _fpowi,
    math.IPowIOp: _ipow,
    # not in mathlib yet: C's functions lane by lane (correct, not fast)
    math.TanOp: _libm("tan"), math.AtanOp: _libm("atan"), math.AsinOp: _libm("asin"), math.AcosOp: _libm("acos"),
    math.SinhOp: _libm("sinh"), math.CoshOp: _libm("cosh"), math.AsinhOp: _libm("asinh"),
    math.AcoshOp: _libm("acosh"), math.AtanhOp: _libm("atanh"), math.Atan2Op: _libm("atan2"),
}  # fmt: skip
"""op class -> fn(cx, op, *operands); add a line here for a new arith/math op."""

__all__ = ["EMIT", "Cx", "Unsupported", "compute_type", "storage_type", "widen", "narrow", "round_to", "F32", "F64", "I64"]
