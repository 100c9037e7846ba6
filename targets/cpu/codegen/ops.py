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
zero and out-of-range shifts never trap or go undefined: intops.py).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float64Type

from . import intops, mathlib
from .intops import bit_width, const_like
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
    if pred[0] == "u" or bit_width(a) == 1:  # bools compare as 0 < 1
        return cx.b.icmp_unsigned(rel, a, c)
    return cx.b.icmp_signed(rel, a, c)


def _int_to_float(signed):
    def emit(cx, op, x):
        t = op.result.type
        storage = same_shape(x.type, HALF if isinstance(t, Float16Type) else compute_type(t))
        y = cx.b.sitofp(x, storage) if signed and bit_width(x) > 1 else cx.b.uitofp(x, storage)
        return cx.b.fpext(y, cx.ty(t)) if isinstance(t, Float16Type) else round_to(cx.b, y, t)

    return emit


def _float_to_int(signed):
    def emit(cx, op, x):
        ty = cx.ty(op.result.type)
        if _width_t(ty) == 1:  # float -> bool: nonzero (NaN too)
            return cx.b.fcmp_unordered("!=", x, const_like(x, 0.0))
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
        wi, wo = bit_width(x), _width_t(ty)
        if wi == wo:
            return x
        if wo < wi:
            return cx.b.trunc(x, ty)
        return cx.b.sext(x, ty) if signed and wi > 1 else cx.b.zext(x, ty)

    return emit


def _index_cast(cx, op, x):
    ty = cx.ty(op.result.type)
    wi, wo = bit_width(x), _width_t(ty)
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


def _builder(name):
    return lambda cx, op, a, c: getattr(cx.b, name)(a, c)


def _intrinsic(name):
    return lambda cx, op, *xs: cx.call(name, *xs)


# ops that are one IRBuilder instruction of their two operands
_BUILDER = {
    arith.AddfOp: "fadd",
    arith.SubfOp: "fsub",
    arith.MulfOp: "fmul",
    arith.DivfOp: "fdiv",
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MuliOp: "mul",
    arith.AndIOp: "and_",
    arith.OrIOp: "or_",
    arith.XOrIOp: "xor",
}
# ops that are one LLVM intrinsic of their operands
_INTRINSIC = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
    math.AbsFOp: "llvm.fabs",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.TruncOp: "llvm.trunc",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.rint",
    math.SqrtOp: "llvm.sqrt",
    math.CopySignOp: "llvm.copysign",
    math.FmaOp: "llvm.fma",
    math.CtPopOp: "llvm.ctpop",
}
# functions of the math library (mathlib.py), vectorised
_MATHLIB = {
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.ExpM1Op: "expm1",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.Log1pOp: "log1p",
    math.TanhOp: "tanh",
    math.ErfOp: "erf",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.RsqrtOp: "rsqrt",
    math.PowFOp: "pow",
}
# not in mathlib yet: C's functions lane by lane (correct, not fast)
_LIBM = {
    math.TanOp: "tan",
    math.AtanOp: "atan",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.Atan2Op: "atan2",
}

EMIT: dict[type, object] = {
    **{cls: _builder(name) for cls, name in _BUILDER.items()},
    **{cls: _intrinsic(name) for cls, name in _INTRINSIC.items()},
    **{cls: _lib(name) for cls, name in _MATHLIB.items()},
    **{cls: _libm(name) for cls, name in _LIBM.items()},
    arith.ConstantOp: _const,
    arith.NegfOp: lambda cx, op, x: cx.b.fneg(x),
    arith.DivSIOp: intops.sdiv,
    arith.RemSIOp: intops.srem,
    arith.DivUIOp: intops.udiv,
    arith.RemUIOp: intops.urem,
    arith.FloorDivSIOp: intops.floordiv,
    arith.CeilDivSIOp: intops.ceildiv,
    arith.ShLIOp: intops.shift("shl"),
    arith.ShRUIOp: intops.shift("lshr"),
    arith.ShRSIOp: intops.shift("ashr"),
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: _select,
    arith.SIToFPOp: _int_to_float(True),
    arith.UIToFPOp: _int_to_float(False),
    arith.FPToSIOp: _float_to_int(True),
    arith.FPToUIOp: _float_to_int(False),
    arith.ExtFOp: _extf,
    arith.TruncFOp: _truncf,
    arith.ExtSIOp: _int_resize(True),
    arith.ExtUIOp: _int_resize(False),
    arith.TruncIOp: _int_resize(False),
    arith.IndexCastOp: _index_cast,
    arith.BitcastOp: _bitcast,
    math.AbsIOp: lambda cx, op, x: cx.call("llvm.abs", x, ir.Constant(I1, 0)),
    math.CbrtOp: _cbrt,
    math.FPowIOp: _fpowi,
    math.IPowIOp: intops.ipow,
}
"""op class -> fn(cx, op, *operands); add a line here for a new arith/math op."""

__all__ = [
    "EMIT",
    "Cx",
    "Unsupported",
    "compute_type",
    "storage_type",
    "widen",
    "narrow",
    "round_to",
    "F32",
    "F64",
    "I64",
]
