"""The meaning of the scalar arith and math ops (loop bodies) as torch: `SCALAR[op class](op, *operands)`
on tensors that broadcast against each other, including the integer corner cases every target follows
(bool arithmetic is xor/and, unsigned ops reinterpret the bits, division is eager's).
"""

from collections.abc import Callable

import torch
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute

from irc.ir.types import torch_dtype


def scalar_dtype(t: Attribute) -> torch.dtype:
    return torch.int64 if isinstance(t, IndexType) else torch_dtype(t)


def _cmpf(pred: str, a, b):
    nan = torch.isnan(a) | torch.isnan(b)
    base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": a != b}
    if pred in ("false", "true"):
        return torch.full(torch.broadcast_shapes(a.shape, b.shape), pred == "true")
    if pred == "ord":
        return ~nan
    if pred == "uno":
        return nan
    rel = base[pred[1:]]
    return (rel & ~nan) if pred[0] == "o" else (rel | nan)


def _unsigned(x):
    return x.to(torch.int64) & ((1 << (x.element_size() * 8)) - 1) if x.dtype not in (torch.bool, torch.int64) else x


def _cmpi(pred: str, a, b):
    if pred[0] == "u" and a.dtype != torch.bool:
        a, b = _unsigned(a), _unsigned(b)
    rel = pred[1:] if pred[0] in "su" else pred
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[rel]


def _shr_u(a, b):
    return torch.bitwise_right_shift(_unsigned(a), b).to(a.dtype)


def _round_away(x):
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _cast(op, x):
    return x.to(scalar_dtype(op.result.type))


def _bitcast(op, x):
    return x.contiguous().view(scalar_dtype(op.result.type))


def _constant(op):
    v = op.value
    value = v.value.data if hasattr(v, "value") else v.get_values()[0]
    return torch.tensor(value, dtype=scalar_dtype(op.result.type))


_F = Callable[..., torch.Tensor]
SCALAR: dict[type, _F] = {
    arith.ConstantOp: _constant,
    arith.AddfOp: lambda op, a, b: a + b,
    arith.SubfOp: lambda op, a, b: a - b,
    arith.MulfOp: lambda op, a, b: a * b,
    arith.DivfOp: lambda op, a, b: a / b,
    arith.NegfOp: lambda op, a: -a,
    arith.MaximumfOp: lambda op, a, b: torch.maximum(a, b),
    arith.MinimumfOp: lambda op, a, b: torch.minimum(a, b),
    arith.MaxnumfOp: lambda op, a, b: torch.fmax(a, b),
    arith.MinnumfOp: lambda op, a, b: torch.fmin(a, b),
    arith.AddiOp: lambda op, a, b: a + b if a.dtype != torch.bool else a ^ b,
    arith.SubiOp: lambda op, a, b: a - b if a.dtype != torch.bool else a ^ b,
    arith.MuliOp: lambda op, a, b: a * b if a.dtype != torch.bool else a & b,
    arith.DivSIOp: lambda op, a, b: torch.div(a, b, rounding_mode="trunc"),
    arith.DivUIOp: lambda op, a, b: torch.div(_unsigned(a), _unsigned(b), rounding_mode="trunc").to(a.dtype),
    arith.FloorDivSIOp: lambda op, a, b: torch.div(a, b, rounding_mode="floor"),
    arith.CeilDivSIOp: lambda op, a, b: -torch.div(-a, b, rounding_mode="floor"),
    arith.RemSIOp: lambda op, a, b: torch.fmod(a, b),
    arith.RemUIOp: lambda op, a, b: torch.remainder(_unsigned(a), _unsigned(b)).to(a.dtype),
    arith.MaxSIOp: lambda op, a, b: torch.maximum(a, b),
    arith.MinSIOp: lambda op, a, b: torch.minimum(a, b),
    arith.MaxUIOp: lambda op, a, b: torch.maximum(_unsigned(a), _unsigned(b)).to(a.dtype),
    arith.MinUIOp: lambda op, a, b: torch.minimum(_unsigned(a), _unsigned(b)).to(a.dtype),
    arith.AndIOp: lambda op, a, b: a & b,
    arith.OrIOp: lambda op, a, b: a | b,
    arith.XOrIOp: lambda op, a, b: a ^ b,
    arith.ShLIOp: lambda op, a, b: torch.bitwise_left_shift(a, b),
    arith.ShRSIOp: lambda op, a, b: torch.bitwise_right_shift(a, b),
    arith.ShRUIOp: lambda op, a, b: _shr_u(a, b),
    arith.CmpfOp: lambda op, a, b: _cmpf(arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data], a, b),
    arith.CmpiOp: lambda op, a, b: _cmpi(arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data], a, b),
    arith.SelectOp: lambda op, c, a, b: torch.where(c, a, b),
    arith.SIToFPOp: _cast,
    arith.UIToFPOp: lambda op, x: _unsigned(x).to(scalar_dtype(op.result.type)),
    arith.FPToSIOp: _cast,
    arith.FPToUIOp: _cast,
    arith.ExtFOp: _cast,
    arith.TruncFOp: _cast,
    arith.ExtSIOp: _cast,
    arith.ExtUIOp: lambda op, x: _unsigned(x).to(scalar_dtype(op.result.type)),
    arith.TruncIOp: _cast,
    arith.IndexCastOp: _cast,
    arith.BitcastOp: _bitcast,
    math.AbsFOp: lambda op, x: torch.abs(x),
    math.AbsIOp: lambda op, x: torch.abs(x),
    math.ExpOp: lambda op, x: torch.exp(x),
    math.Exp2Op: lambda op, x: torch.exp2(x),
    math.ExpM1Op: lambda op, x: torch.expm1(x),
    math.LogOp: lambda op, x: torch.log(x),
    math.Log2Op: lambda op, x: torch.log2(x),
    math.Log10Op: lambda op, x: torch.log10(x),
    math.Log1pOp: lambda op, x: torch.log1p(x),
    math.SqrtOp: lambda op, x: torch.sqrt(x),
    math.RsqrtOp: lambda op, x: torch.rsqrt(x),
    math.CbrtOp: lambda op, x: torch.sign(x) * torch.abs(x).pow(1 / 3),
    math.SinOp: lambda op, x: torch.sin(x),
    math.CosOp: lambda op, x: torch.cos(x),
    math.TanOp: lambda op, x: torch.tan(x),
    math.AsinOp: lambda op, x: torch.asin(x),
    math.AcosOp: lambda op, x: torch.acos(x),
    math.AtanOp: lambda op, x: torch.atan(x),
    math.Atan2Op: lambda op, a, b: torch.atan2(a, b),
    math.SinhOp: lambda op, x: torch.sinh(x),
    math.CoshOp: lambda op, x: torch.cosh(x),
    math.TanhOp: lambda op, x: torch.tanh(x),
    math.AsinhOp: lambda op, x: torch.asinh(x),
    math.AcoshOp: lambda op, x: torch.acosh(x),
    math.AtanhOp: lambda op, x: torch.atanh(x),
    math.ErfOp: lambda op, x: torch.erf(x),
    math.FloorOp: lambda op, x: torch.floor(x),
    math.CeilOp: lambda op, x: torch.ceil(x),
    math.RoundOp: lambda op, x: _round_away(x),
    math.RoundEvenOp: lambda op, x: torch.round(x),
    math.TruncOp: lambda op, x: torch.trunc(x),
    math.PowFOp: lambda op, a, b: torch.pow(a, b),
    math.IPowIOp: lambda op, a, b: torch.pow(a, b),
    math.FPowIOp: lambda op, a, b: torch.pow(a, b),
    math.CopySignOp: lambda op, a, b: torch.copysign(a, b),
    math.FmaOp: lambda op, a, b, c: a * b + c,
}
