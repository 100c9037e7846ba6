"""Elementwise aten ops: casts and type promotion are made explicit; broadcasting stays implicit in tn."""

import math

import torch
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue

from irc.dialects import tensor as tn
from irc.lowering.loop_builder import OP_ROUNDING

from ..aten_table import Unsupported, imports

aten = torch.ops.aten


def out_dtype(node) -> torch.dtype:
    return node.meta["val"].dtype


def _stand_in(b, a):
    """What torch.result_type needs: an empty tensor of the operand's dtype and rank, or the number itself."""
    from xdsl.dialects.builtin import IndexType

    if not hasattr(a, "type"):
        return a
    if isinstance(a.type, IndexType):
        return 1
    return torch.empty((1,) * len(a.type.get_shape()), dtype=b.dtype(a))


def round_once(b, v: SSAValue, dtype: torch.dtype) -> SSAValue:
    """v (an op's float32 result) rounded to `dtype` as the op's own rounding: a fused consumer may read it unrounded."""
    r = b.convert(v, dtype)
    if isinstance(r.owner, tn.ConvertOp):
        r.owner.attributes[OP_ROUNDING] = UnitAttr()
    return r


def common_dtype(b, x, y) -> torch.dtype:
    """torch's type promotion of two operands (a 0-d tensor promotes like a scalar, as in eager)."""
    return torch.result_type(_stand_in(b, x), _stand_in(b, y))


def unary(overload, op_cls):
    """Result dtype from FX (e.g. exp of an int tensor is float): cast the operand to it first."""

    @imports(overload)
    def imp(b, node, x):
        return b.add(op_cls(b.tensor(x, out_dtype(node))))

    return imp


NARROW = (torch.bfloat16, torch.float16)


def binary(overload, op_cls):
    """Both operands cast to the result dtype, then one tn op (alpha, where given, scales the second). In bf16/f16,
    a product or quotient by a Python number, and x + alpha * y, are computed in float32 and rounded once, as eager's
    kernels do (the number kept in float32: 0.1 rounded to bf16 first puts x * 0.1 up to 0.62 ulp off; alpha in
    the dtype, as eager takes it)."""

    @imports(overload)
    def imp(b, node, x, y, *, alpha=None):
        dt = out_dtype(node)
        scaled = alpha is not None and alpha != 1
        by_number = op_cls in (tn.MulOp, tn.DivOp) and not all(isinstance(v, SSAValue) for v in (x, y))
        if dt in NARROW and (scaled or by_number):
            if scaled and isinstance(alpha, int | float):
                alpha = float(torch.tensor(alpha, dtype=dt))  # eager takes alpha in the dtype, the sum in float32
            return round_once(b, _binary(b, op_cls, x, y, alpha if scaled else None, torch.float32), dt)
        return _binary(b, op_cls, x, y, alpha if scaled else None, dt)

    return imp


def _binary(b, op_cls, x, y, alpha, dt):
    lhs, rhs = b.tensor(x, dt), b.tensor(y, dt)
    if alpha is not None:
        rhs = b.add(tn.MulOp(rhs, b.tensor(alpha, dt)))
    return b.add(op_cls(lhs, rhs))


def compare(overload, op_cls):
    """Operands promoted to their common dtype; the result is bool."""

    @imports(overload)
    def imp(b, node, x, y):
        dt = common_dtype(b, x, y)
        return b.add(op_cls(b.tensor(x, dt), b.tensor(y, dt)))

    return imp


def predicate(overload, op_cls):
    @imports(overload)
    def imp(b, node, x):
        return b.add(op_cls(x))

    return imp


for _name, _cls in {
    "neg": tn.NegOp,
    "abs": tn.AbsOp,
    "exp": tn.ExpOp,
    "exp2": tn.Exp2Op,
    "expm1": tn.Expm1Op,
    "log": tn.LogOp,
    "log2": tn.Log2Op,
    "log10": tn.Log10Op,
    "log1p": tn.Log1pOp,
    "sqrt": tn.SqrtOp,
    "rsqrt": tn.RsqrtOp,
    "reciprocal": tn.ReciprocalOp,
    "sin": tn.SinOp,
    "cos": tn.CosOp,
    "tan": tn.TanOp,
    "asin": tn.AsinOp,
    "acos": tn.AcosOp,
    "atan": tn.AtanOp,
    "sinh": tn.SinhOp,
    "cosh": tn.CoshOp,
    "tanh": tn.TanhOp,
    "asinh": tn.AsinhOp,
    "acosh": tn.AcoshOp,
    "atanh": tn.AtanhOp,
    "sigmoid": tn.SigmoidOp,
    "erf": tn.ErfOp,
    "erfinv": tn.ErfinvOp,
    "lgamma": tn.LgammaOp,
    "digamma": tn.DigammaOp,
    "floor": tn.FloorOp,
    "ceil": tn.CeilOp,
    "round": tn.RoundOp,
    "trunc": tn.TruncOp,
    "sign": tn.SignOp,
    "relu": tn.ReluOp,
    "bitwise_not": tn.BitwiseNotOp,
}.items():
    unary(getattr(aten, _name).default, _cls)

for _name, _cls in {
    "isnan": tn.IsNanOp,
    "isinf": tn.IsInfOp,
    "logical_not": tn.LogicalNotOp,
    "signbit": tn.SignbitOp,
}.items():
    predicate(getattr(aten, _name).default, _cls)

for _name, _cls in {
    "add": tn.AddOp,
    "sub": tn.SubOp,
    "mul": tn.MulOp,
    "remainder": tn.RemainderOp,
    "fmod": tn.FmodOp,
    "bitwise_and": tn.BitwiseAndOp,
    "bitwise_or": tn.BitwiseOrOp,
    "bitwise_xor": tn.BitwiseXorOp,
    "bitwise_left_shift": tn.ShiftLeftOp,
    "bitwise_right_shift": tn.ShiftRightOp,
    "copysign": tn.CopysignOp,
}.items():
    for _ov in ("Tensor", "Scalar", "Tensor_Scalar"):
        if hasattr(getattr(aten, _name), _ov):
            binary(getattr(getattr(aten, _name), _ov), _cls)

for _name, _cls in {
    "maximum": tn.MaximumOp,
    "minimum": tn.MinimumOp,
    "fmax": tn.FmaxOp,
    "fmin": tn.FminOp,
    "gcd": tn.GcdOp,
    "lcm": tn.LcmOp,
    "atan2": tn.Atan2Op,
    "hypot": tn.HypotOp,
    "nextafter": tn.NextafterOp,
}.items():
    binary(getattr(aten, _name).default, _cls)

binary(aten.div.Tensor, tn.DivOp)
binary(aten.div.Scalar, tn.DivOp)
binary(aten.pow.Tensor_Tensor, tn.PowOp)
binary(aten.pow.Tensor_Scalar, tn.PowOp)
binary(aten.pow.Scalar, tn.PowOp)

for _name, _cls in {"eq": tn.EqOp, "ne": tn.NeOp, "lt": tn.LtOp, "le": tn.LeOp, "gt": tn.GtOp, "ge": tn.GeOp}.items():
    compare(getattr(aten, _name).Tensor, _cls)
    compare(getattr(aten, _name).Scalar, _cls)


@imports(aten.div.Tensor_mode, aten.div.Scalar_mode)
def import_div_mode(b, node, x, y, *, rounding_mode=None):
    dt = out_dtype(node)
    lhs, rhs = b.tensor(x, dt), b.tensor(y, dt)
    if rounding_mode is None:
        return b.add(tn.DivOp(lhs, rhs))
    if rounding_mode == "floor":
        return b.add(tn.FloorDivOp(lhs, rhs))
    if rounding_mode == "trunc":
        return b.add(tn.TruncDivOp(lhs, rhs))
    raise Unsupported(f"rounding_mode {rounding_mode!r}")


@imports(aten.logical_and.default, aten.logical_or.default, aten.logical_xor.default)
def import_logical(b, node, x, y):
    op_cls = {"logical_and": tn.BitwiseAndOp, "logical_or": tn.BitwiseOrOp, "logical_xor": tn.BitwiseXorOp}
    return b.add(op_cls[node.target._opname](b.tensor(x, torch.bool), b.tensor(y, torch.bool)))


@imports(aten.where.self)
def import_where(b, node, cond, x, y):
    dt = out_dtype(node)
    return b.add(tn.WhereOp(b.tensor(cond, torch.bool), b.tensor(x, dt), b.tensor(y, dt)))


@imports(
    aten.clamp.default,
    aten.clamp.Tensor,
    aten.clamp_min.default,
    aten.clamp_max.default,
    aten.clamp_min.Tensor,
    aten.clamp_max.Tensor,
)
def import_clamp(b, node, x, lo=None, hi=None):
    if node.target._opname == "clamp_max":
        lo, hi = None, lo
    dt = out_dtype(node)
    r = b.tensor(x, dt)
    if lo is not None:
        r = b.add(tn.MaximumOp(r, b.tensor(lo, dt)))
    if hi is not None:
        r = b.add(tn.MinimumOp(r, b.tensor(hi, dt)))
    return b.expand(r, node.meta["val"].shape)


@imports(aten.gelu.default)
def import_gelu(b, node, x, *, approximate="none"):
    return b.add(tn.GeluOp(x, approximate))


@imports(aten._to_copy.default)
def import_to_copy(
    b, node, x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None
):
    if device is not None and torch.device(device).type != "cpu":
        raise Unsupported(f"copy to device {device}")
    if layout not in (None, torch.strided):
        raise Unsupported(f"layout {layout}")
    return b.convert(x, out_dtype(node))


@imports(torch.ops.prims.convert_element_type.default)
def import_convert_element_type(b, node, x, dtype):
    """What Dynamo writes for math on a symbolic size (math.sqrt(x.shape[-1]): f32 -> f64, sqrt, -> f32)."""
    return b.convert(x, out_dtype(node))


@imports(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default)
def import_identity(b, node, x, *, memory_format=None):
    return x


@imports(aten.copy.default)
def import_copy(b, node, dst, src, non_blocking=False):
    return b.expand(b.convert(src, out_dtype(node)), node.meta["val"].shape)


@imports(aten.round.decimals)
def import_round_decimals(b, node, x, *, decimals=0):
    """eager's kernel: nearbyint(x * 10**d) / 10**d, or nearbyint(x / 10**-d) * 10**-d, in the tensor's dtype."""
    if decimals == 0:
        return b.add(tn.RoundOp(x))
    if b.dtype(x) not in (torch.float32, torch.float64):
        raise Unsupported(f"round with decimals on {b.dtype(x)} (eager computes it in float32)")
    scale = b.constant(10.0 ** abs(decimals), b.dtype(x))
    if decimals > 0:
        return b.add(tn.DivOp(b.add(tn.RoundOp(b.add(tn.MulOp(x, scale)))), scale))
    return b.add(tn.MulOp(b.add(tn.RoundOp(b.add(tn.DivOp(x, scale)))), scale))


@imports(aten.angle.default)
def import_angle(b, node, x):
    """Real angle as eager computes it: NaN stays NaN, negatives give pi, the rest 0."""
    dt = out_dtype(node)
    if dt.is_complex or b.dtype(x).is_complex:
        raise Unsupported("angle of a complex tensor")
    x = b.tensor(x, dt)
    negative = b.add(tn.LtOp(x, b.constant(0, dt)))
    r = b.add(tn.WhereOp(negative, b.constant(math.pi, dt), b.constant(0, dt)))
    return b.add(tn.WhereOp(b.add(tn.IsNanOp(x)), x, r))
