"""Element types on the CPU: what a body value computes in, what an element is in memory, conversions.

f16 and bf16 compute in f32 (as eager's CPU kernels do): loads widen, stores and explicit casts round
to nearest even; bool is i1 in registers and one byte in memory; index is i64.
"""

from __future__ import annotations

import struct

from llvmlite import ir
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)

from .vec import F32, F64, I8, I16, I64, same_shape

HALF = ir.HalfType()


class Unsupported(NotImplementedError):
    """The CPU target cannot emit this (the kernel then runs through the reference evaluator)."""


def compute_type(t) -> ir.Type:
    """The LLVM scalar type a body value of xDSL type `t` is computed in."""
    if isinstance(t, Float16Type | BFloat16Type | Float32Type):
        return F32
    if isinstance(t, Float64Type):
        return F64
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    raise Unsupported(f"no CPU compute type for {t}")


def storage_type(t) -> ir.Type:
    """The LLVM type of one element in memory."""
    if isinstance(t, Float16Type):
        return HALF
    if isinstance(t, BFloat16Type):
        return I16
    if isinstance(t, IntegerType) and t.width.data == 1:
        return I8
    return compute_type(t)


def is_float(t) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_unsigned(t) -> bool:
    return isinstance(t, IntegerType) and (t.signedness.data == Signedness.UNSIGNED or t.width.data == 1)


def widen(b: ir.IRBuilder, x, t):
    """A loaded element (storage type) as a compute value."""
    if isinstance(t, Float16Type):
        return b.fpext(x, same_shape(x.type, F32))
    if isinstance(t, BFloat16Type):
        i32 = same_shape(x.type, ir.IntType(32))
        return b.bitcast(b.shl(b.zext(x, i32), splat(i32, 16)), same_shape(x.type, F32))
    if isinstance(t, IntegerType) and t.width.data == 1:
        return b.icmp_unsigned("!=", x, splat(x.type, 0))
    return x


def narrow(b: ir.IRBuilder, x, t):
    """A compute value as the storage element (f16/bf16 rounded to nearest even, bool as a byte)."""
    if isinstance(t, Float16Type):
        return b.fptrunc(x, same_shape(x.type, HALF))
    if isinstance(t, BFloat16Type):
        return _bf16_bits(b, x)
    if isinstance(t, IntegerType) and t.width.data == 1:
        return b.zext(x, same_shape(x.type, I8))
    return x


def _bf16_bits(b, x):
    if (held := _widened_bf16(x)) is not None:  # already a bf16 value (a cast's round_to): its bits as they are
        return held
    i32 = same_shape(x.type, ir.IntType(32))
    bits = b.bitcast(x, i32)
    lsb = b.and_(b.lshr(bits, splat(i32, 16)), splat(i32, 1))
    rounded = b.lshr(b.add(b.add(bits, splat(i32, 0x7FFF)), lsb), splat(i32, 16))
    nan = b.fcmp_unordered("uno", x, x)
    return b.trunc(b.select(nan, splat(i32, 0x7FC0), rounded), same_shape(x.type, I16))


def _widened_bf16(x):
    """The i16 bits `x` was widened from by widen() (bitcast(shl(zext(bits), 16))), else None: storing a value a
    cast already rounded to bf16 takes its bits, rather than rounding it a second time (which LLVM does not fold)."""
    if not (isinstance(x, ir.CastInstr) and x.opname == "bitcast"):
        return None
    shl = x.operands[0]
    if not (isinstance(shl, ir.Instruction) and shl.opname == "shl"):
        return None
    zext, by = shl.operands
    if not (isinstance(zext, ir.CastInstr) and zext.opname == "zext" and by == splat(by.type, 16)):
        return None
    bits = zext.operands[0]
    return bits if bits.type == same_shape(x.type, I16) else None


def round_to(b: ir.IRBuilder, x, t):
    """An f32 compute value rounded to the precision of f16/bf16 type `t` (identity for other types)."""
    if isinstance(t, Float16Type | BFloat16Type):
        return widen(b, narrow(b, x, t), t)
    return x


def splat(ty, v):
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, v)] * ty.count)
    return ir.Constant(ty, v)


def const_value(op: arith.ConstantOp):
    v = op.value
    return v.value.data if hasattr(v, "value") else v.get_values()[0]


def exact_constant(value, t):
    """A Python number as the value type `t` holds it (f16/bf16 rounded, ints wrapped)."""
    if isinstance(t, Float16Type):
        return struct.unpack("e", struct.pack("e", float(value)))[0] if abs(float(value)) < 65520 else _inf_like(value)
    if isinstance(t, BFloat16Type):
        import torch

        return float(torch.tensor(float(value), dtype=torch.bfloat16).float())
    if isinstance(t, Float32Type):
        import numpy

        return float(numpy.float32(value))
    if is_float(t):
        return float(value)
    width = 64 if isinstance(t, IndexType) else t.width.data
    v = int(value) & ((1 << width) - 1)
    return v - (1 << width) if width > 1 and v >= 1 << (width - 1) else v


def _inf_like(value):
    return float("nan") if value != value else float("inf") if value > 0 else float("-inf")
