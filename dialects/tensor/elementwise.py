"""tn elementwise ops: unary math, predicates, binary arithmetic, comparisons, select, casts."""

from typing import ClassVar
from xdsl.dialects.builtin import StringAttr, TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import Binary, Compare, Predicate, Unary, broadcast_shapes, check_shape, element, shape

# ---- unary, result type == operand type ---------------------------------------------------------


@irdl_op_definition
class NegOp(Unary):
    """Negation.   %r = tn.neg %x : tensor<4xf32>"""

    name = "tn.neg"


@irdl_op_definition
class AbsOp(Unary):
    """Absolute value.   %r = tn.abs %x : tensor<4xf32>"""

    name = "tn.abs"


@irdl_op_definition
class ExpOp(Unary):
    """e**x.   %r = tn.exp %x : tensor<4xf32>"""

    name = "tn.exp"


@irdl_op_definition
class Exp2Op(Unary):
    """2**x.   %r = tn.exp2 %x : tensor<4xf32>"""

    name = "tn.exp2"


@irdl_op_definition
class Expm1Op(Unary):
    """e**x - 1.   %r = tn.expm1 %x : tensor<4xf32>"""

    name = "tn.expm1"


@irdl_op_definition
class LogOp(Unary):
    """Natural logarithm.   %r = tn.log %x : tensor<4xf32>"""

    name = "tn.log"


@irdl_op_definition
class Log2Op(Unary):
    """Base-2 logarithm.   %r = tn.log2 %x : tensor<4xf32>"""

    name = "tn.log2"


@irdl_op_definition
class Log10Op(Unary):
    """Base-10 logarithm.   %r = tn.log10 %x : tensor<4xf32>"""

    name = "tn.log10"


@irdl_op_definition
class Log1pOp(Unary):
    """log(1 + x).   %r = tn.log1p %x : tensor<4xf32>"""

    name = "tn.log1p"


@irdl_op_definition
class SqrtOp(Unary):
    """Square root.   %r = tn.sqrt %x : tensor<4xf32>"""

    name = "tn.sqrt"


@irdl_op_definition
class RsqrtOp(Unary):
    """1 / sqrt(x).   %r = tn.rsqrt %x : tensor<4xf32>"""

    name = "tn.rsqrt"


@irdl_op_definition
class ReciprocalOp(Unary):
    """1 / x.   %r = tn.reciprocal %x : tensor<4xf32>"""

    name = "tn.reciprocal"


@irdl_op_definition
class SinOp(Unary):
    """Sine.   %r = tn.sin %x : tensor<4xf32>"""

    name = "tn.sin"


@irdl_op_definition
class CosOp(Unary):
    """Cosine.   %r = tn.cos %x : tensor<4xf32>"""

    name = "tn.cos"


@irdl_op_definition
class TanOp(Unary):
    """Tangent.   %r = tn.tan %x : tensor<4xf32>"""

    name = "tn.tan"


@irdl_op_definition
class AsinOp(Unary):
    """Arcsine.   %r = tn.asin %x : tensor<4xf32>"""

    name = "tn.asin"


@irdl_op_definition
class AcosOp(Unary):
    """Arccosine.   %r = tn.acos %x : tensor<4xf32>"""

    name = "tn.acos"


@irdl_op_definition
class AtanOp(Unary):
    """Arctangent.   %r = tn.atan %x : tensor<4xf32>"""

    name = "tn.atan"


@irdl_op_definition
class SinhOp(Unary):
    """Hyperbolic sine.   %r = tn.sinh %x : tensor<4xf32>"""

    name = "tn.sinh"


@irdl_op_definition
class CoshOp(Unary):
    """Hyperbolic cosine.   %r = tn.cosh %x : tensor<4xf32>"""

    name = "tn.cosh"


@irdl_op_definition
class TanhOp(Unary):
    """Hyperbolic tangent.   %r = tn.tanh %x : tensor<4xf32>"""

    name = "tn.tanh"


@irdl_op_definition
class AsinhOp(Unary):
    """Inverse hyperbolic sine.   %r = tn.asinh %x : tensor<4xf32>"""

    name = "tn.asinh"


@irdl_op_definition
class AcoshOp(Unary):
    """Inverse hyperbolic cosine.   %r = tn.acosh %x : tensor<4xf32>"""

    name = "tn.acosh"


@irdl_op_definition
class AtanhOp(Unary):
    """Inverse hyperbolic tangent.   %r = tn.atanh %x : tensor<4xf32>"""

    name = "tn.atanh"


@irdl_op_definition
class SigmoidOp(Unary):
    """Logistic function 1 / (1 + e**-x).   %r = tn.sigmoid %x : tensor<4xf32>"""

    name = "tn.sigmoid"


@irdl_op_definition
class ErfOp(Unary):
    """Error function.   %r = tn.erf %x : tensor<4xf32>"""

    name = "tn.erf"


@irdl_op_definition
class ErfinvOp(Unary):
    """Inverse error function.   %r = tn.erfinv %x : tensor<4xf32>"""

    name = "tn.erfinv"


@irdl_op_definition
class LgammaOp(Unary):
    """log |Gamma(x)|.   %r = tn.lgamma %x : tensor<4xf32>"""

    name = "tn.lgamma"


@irdl_op_definition
class DigammaOp(Unary):
    """Logarithmic derivative of Gamma.   %r = tn.digamma %x : tensor<4xf32>"""

    name = "tn.digamma"


@irdl_op_definition
class FloorOp(Unary):
    """Round towards -inf.   %r = tn.floor %x : tensor<4xf32>"""

    name = "tn.floor"


@irdl_op_definition
class CeilOp(Unary):
    """Round towards +inf.   %r = tn.ceil %x : tensor<4xf32>"""

    name = "tn.ceil"


@irdl_op_definition
class RoundOp(Unary):
    """Round half to even.   %r = tn.round %x : tensor<4xf32>"""

    name = "tn.round"


@irdl_op_definition
class TruncOp(Unary):
    """Round towards zero.   %r = tn.trunc %x : tensor<4xf32>"""

    name = "tn.trunc"


@irdl_op_definition
class SignOp(Unary):
    """-1, 0 or 1 by the sign of x (0 for NaN-free zero).   %r = tn.sign %x : tensor<4xf32>"""

    name = "tn.sign"


@irdl_op_definition
class ReluOp(Unary):
    """max(x, 0).   %r = tn.relu %x : tensor<4xf32>"""

    name = "tn.relu"


@irdl_op_definition
class BitwiseNotOp(Unary):
    """Bitwise complement of integers, logical not of i1.   %r = tn.bitwise_not %x : tensor<4xi32>"""

    name = "tn.bitwise_not"


@irdl_op_definition
class GeluOp(IRDLOperation):
    """Gaussian error linear unit, exact (erf) or `tanh`-approximated.   %r = tn.gelu %x approximate = "tanh" : tensor<4xf32>"""

    name = "tn.gelu"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    approximate = prop_def(StringAttr)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `approximate` `=` $approximate attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, approximate: str = "none"):
        super().__init__(
            operands=[input], result_types=[input.type], properties={"approximate": StringAttr(approximate)}
        )

    def verify_(self):
        if self.approximate.data not in ("none", "tanh"):
            raise VerifyException(f'{self.name}: approximate must be "none" or "tanh"')
        if self.input.type != self.result.type:
            raise VerifyException(f"{self.name}: result type must equal the operand type")


# ---- predicates, i1 result -----------------------------------------------------------------------


@irdl_op_definition
class IsNanOp(Predicate):
    """True where x is NaN.   %r = tn.isnan %x : tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.isnan"


@irdl_op_definition
class IsInfOp(Predicate):
    """True where x is +inf or -inf.   %r = tn.isinf %x : tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.isinf"


@irdl_op_definition
class LogicalNotOp(Predicate):
    """True where x is zero.   %r = tn.logical_not %x : tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.logical_not"


@irdl_op_definition
class SignbitOp(Predicate):
    """True where the sign bit of x is set.   %r = tn.signbit %x : tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.signbit"


# ---- binary, broadcasting ------------------------------------------------------------------------


@irdl_op_definition
class AddOp(Binary):
    """Sum.   %r = tn.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>"""

    name = "tn.add"


@irdl_op_definition
class SubOp(Binary):
    """Difference.   %r = tn.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.sub"


@irdl_op_definition
class MulOp(Binary):
    """Product.   %r = tn.mul %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.mul"


@irdl_op_definition
class DivOp(Binary):
    """True division (floats).   %r = tn.div %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.div"


@irdl_op_definition
class FloorDivOp(Binary):
    """Division rounded towards -inf.   %r = tn.floordiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>"""

    name = "tn.floordiv"


@irdl_op_definition
class TruncDivOp(Binary):
    """Division rounded towards zero.   %r = tn.truncdiv %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>"""

    name = "tn.truncdiv"


@irdl_op_definition
class RemainderOp(Binary):
    """Python-style modulus (sign of the divisor).   %r = tn.remainder %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.remainder"


@irdl_op_definition
class FmodOp(Binary):
    """C-style modulus (sign of the dividend).   %r = tn.fmod %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.fmod"


@irdl_op_definition
class PowOp(Binary):
    """a**b.   %r = tn.pow %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.pow"


@irdl_op_definition
class MaximumOp(Binary):
    """Elementwise max, NaN-propagating.   %r = tn.maximum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.maximum"


@irdl_op_definition
class MinimumOp(Binary):
    """Elementwise min, NaN-propagating.   %r = tn.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.minimum"


@irdl_op_definition
class FmaxOp(Binary):
    """Elementwise max ignoring NaN (NaN only where both are).   %r = tn.fmax %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.fmax"


@irdl_op_definition
class FminOp(Binary):
    """Elementwise min ignoring NaN (NaN only where both are).   %r = tn.fmin %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.fmin"


@irdl_op_definition
class Atan2Op(Binary):
    """atan(a / b) in the right quadrant.   %r = tn.atan2 %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.atan2"


@irdl_op_definition
class HypotOp(Binary):
    """sqrt(a**2 + b**2).   %r = tn.hypot %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.hypot"


@irdl_op_definition
class CopysignOp(Binary):
    """|a| with the sign of b.   %r = tn.copysign %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.copysign"


@irdl_op_definition
class NextafterOp(Binary):
    """Next representable float after a towards b.   %r = tn.nextafter %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"""

    name = "tn.nextafter"


@irdl_op_definition
class GcdOp(Binary):
    """Greatest common divisor of integers (non-negative).   %r = tn.gcd %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>"""

    name = "tn.gcd"


@irdl_op_definition
class LcmOp(Binary):
    """Least common multiple of integers (non-negative).   %r = tn.lcm %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>"""

    name = "tn.lcm"


@irdl_op_definition
class BitwiseAndOp(Binary):
    """Bitwise and (logical and on i1).   %r = tn.bitwise_and %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>"""

    name = "tn.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(Binary):
    """Bitwise or (logical or on i1).   %r = tn.bitwise_or %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>"""

    name = "tn.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(Binary):
    """Bitwise xor (logical xor on i1).   %r = tn.bitwise_xor %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>"""

    name = "tn.bitwise_xor"


@irdl_op_definition
class ShiftLeftOp(Binary):
    """Integer shift left.   %r = tn.shift_left %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>"""

    name = "tn.shift_left"


@irdl_op_definition
class ShiftRightOp(Binary):
    """Arithmetic integer shift right.   %r = tn.shift_right %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>"""

    name = "tn.shift_right"


# ---- comparisons, i1 result ----------------------------------------------------------------------


@irdl_op_definition
class EqOp(Compare):
    """a == b.   %r = tn.eq %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.eq"


@irdl_op_definition
class NeOp(Compare):
    """a != b.   %r = tn.ne %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.ne"


@irdl_op_definition
class LtOp(Compare):
    """a < b.   %r = tn.lt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.lt"


@irdl_op_definition
class LeOp(Compare):
    """a <= b.   %r = tn.le %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.le"


@irdl_op_definition
class GtOp(Compare):
    """a > b.   %r = tn.gt %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.gt"


@irdl_op_definition
class GeOp(Compare):
    """a >= b.   %r = tn.ge %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>"""

    name = "tn.ge"


# ---- select and casts ----------------------------------------------------------------------------


@irdl_op_definition
class WhereOp(IRDLOperation):
    """Pick from a where cond is true, else from b; all three broadcast.
    %r = tn.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.where"
    cond = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        out = broadcast_shapes(self.name, shape(cond), shape(lhs), shape(rhs))
        super().__init__(operands=[cond, lhs, rhs], result_types=[TensorType(element(lhs), out)])

    def verify_(self):
        if element(self.cond) != i1:
            raise VerifyException(f"{self.name}: condition must have i1 elements")
        if not element(self.lhs) == element(self.rhs) == element(self.result):
            raise VerifyException(f"{self.name}: both branches and the result must share one element type")
        expected = broadcast_shapes(self.name, shape(self.cond), shape(self.lhs), shape(self.rhs))
        check_shape(self.name, "result", shape(self.result), expected)


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Element type conversion with torch's casting rules (float->int truncates, nonzero->true).
    %r = tn.convert %x : tensor<4xf32> -> tensor<4xi64>"""

    name = "tn.convert"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        super().__init__(operands=[input], result_types=[TensorType(element_type, shape(input))])

    def verify_(self):
        check_shape(self.name, "result", shape(self.result), shape(self.input))
