"""tn special functions: Bessel and error-function relatives, gamma-family and orthogonal polynomials.

Each has torch.special's meaning on float tensors (the importer casts operands to the result dtype first).
"""

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, TensorType, i32, i64
from xdsl.ir import SSAValue
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

from .base import Binary, Unary

# ---- unary, result type == operand type ---------------------------------------------------------


@irdl_op_definition
class I0Op(Unary):
    """Modified Bessel function of the first kind, order 0.   %r = tn.i0 %x : tensor<4xf32>"""

    name = "tn.i0"


@irdl_op_definition
class I0eOp(Unary):
    """Exponentially scaled modified Bessel function of the first kind, order 0.   %r = tn.i0e %x : tensor<4xf32>"""

    name = "tn.i0e"


@irdl_op_definition
class I1Op(Unary):
    """Modified Bessel function of the first kind, order 1.   %r = tn.i1 %x : tensor<4xf32>"""

    name = "tn.i1"


@irdl_op_definition
class I1eOp(Unary):
    """Exponentially scaled modified Bessel function of the first kind, order 1.   %r = tn.i1e %x : tensor<4xf32>"""

    name = "tn.i1e"


@irdl_op_definition
class NdtriOp(Unary):
    """Inverse of the standard normal CDF.   %r = tn.ndtri %x : tensor<4xf32>"""

    name = "tn.ndtri"


@irdl_op_definition
class ErfcOp(Unary):
    """Complementary error function 1 - erf(x).   %r = tn.erfc %x : tensor<4xf32>"""

    name = "tn.erfc"


@irdl_op_definition
class ErfcxOp(Unary):
    """Scaled complementary error function exp(x**2) * erfc(x).   %r = tn.erfcx %x : tensor<4xf32>"""

    name = "tn.erfcx"


@irdl_op_definition
class AiryAiOp(Unary):
    """Airy function Ai.   %r = tn.airy_ai %x : tensor<4xf32>"""

    name = "tn.airy_ai"


@irdl_op_definition
class BesselJ0Op(Unary):
    """Bessel function of the first kind, order 0.   %r = tn.bessel_j0 %x : tensor<4xf32>"""

    name = "tn.bessel_j0"


@irdl_op_definition
class BesselJ1Op(Unary):
    """Bessel function of the first kind, order 1.   %r = tn.bessel_j1 %x : tensor<4xf32>"""

    name = "tn.bessel_j1"


@irdl_op_definition
class BesselY0Op(Unary):
    """Bessel function of the second kind, order 0.   %r = tn.bessel_y0 %x : tensor<4xf32>"""

    name = "tn.bessel_y0"


@irdl_op_definition
class BesselY1Op(Unary):
    """Bessel function of the second kind, order 1.   %r = tn.bessel_y1 %x : tensor<4xf32>"""

    name = "tn.bessel_y1"


@irdl_op_definition
class ModifiedBesselI0Op(Unary):
    """Modified Bessel function of the first kind, order 0 (torch.special's own kernel).   %r = tn.modified_bessel_i0 %x : tensor<4xf32>"""

    name = "tn.modified_bessel_i0"


@irdl_op_definition
class ModifiedBesselI1Op(Unary):
    """Modified Bessel function of the first kind, order 1 (torch.special's own kernel).   %r = tn.modified_bessel_i1 %x : tensor<4xf32>"""

    name = "tn.modified_bessel_i1"


@irdl_op_definition
class ModifiedBesselK0Op(Unary):
    """Modified Bessel function of the second kind, order 0.   %r = tn.modified_bessel_k0 %x : tensor<4xf32>"""

    name = "tn.modified_bessel_k0"


@irdl_op_definition
class ModifiedBesselK1Op(Unary):
    """Modified Bessel function of the second kind, order 1.   %r = tn.modified_bessel_k1 %x : tensor<4xf32>"""

    name = "tn.modified_bessel_k1"


@irdl_op_definition
class ScaledModifiedBesselK0Op(Unary):
    """exp(x) * K0(x).   %r = tn.scaled_modified_bessel_k0 %x : tensor<4xf32>"""

    name = "tn.scaled_modified_bessel_k0"


@irdl_op_definition
class ScaledModifiedBesselK1Op(Unary):
    """exp(x) * K1(x).   %r = tn.scaled_modified_bessel_k1 %x : tensor<4xf32>"""

    name = "tn.scaled_modified_bessel_k1"


@irdl_op_definition
class SphericalBesselJ0Op(Unary):
    """Spherical Bessel function of the first kind, order 0.   %r = tn.spherical_bessel_j0 %x : tensor<4xf32>"""

    name = "tn.spherical_bessel_j0"


@irdl_op_definition
class PolygammaOp(IRDLOperation):
    """The n-th derivative of digamma.   %r = tn.polygamma %x n = 2 : tensor<4xf32>"""

    name = "tn.polygamma"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    n = prop_def(IntegerAttr[i64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `n` `=` $n attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, n: int):
        super().__init__(operands=[input], result_types=[input.type], properties={"n": IntegerAttr(n, i64)})

    def verify_(self):
        if self.n.value.data < 0:
            raise VerifyException(f"{self.name}: n must be non-negative")


@irdl_op_definition
class FrexpOp(IRDLOperation):
    """Mantissa in [0.5, 1) and i32 exponent with x = m * 2**e.   %m, %e = tn.frexp %x : tensor<4xf32> -> tensor<4xi32>"""

    name = "tn.frexp"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    mantissa = result_def(T)
    exponent = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($exponent)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type, TensorType(i32, input.type.get_shape())])

    def verify_(self):
        if self.exponent.type != TensorType(i32, self.input.type.get_shape()):
            raise VerifyException(f"{self.name}: the exponent must be i32 of the operand's shape")


# ---- binary, broadcasting ------------------------------------------------------------------------


@irdl_op_definition
class ZetaOp(Binary):
    """Hurwitz zeta function zeta(a, b).   %r = tn.zeta %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.zeta"


@irdl_op_definition
class IgammaOp(Binary):
    """Regularised lower incomplete gamma function P(a, b).   %r = tn.igamma %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.igamma"


@irdl_op_definition
class IgammacOp(Binary):
    """Regularised upper incomplete gamma function Q(a, b).   %r = tn.igammac %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.igammac"


@irdl_op_definition
class ChebyshevPolynomialTOp(Binary):
    """Chebyshev polynomial of the first kind T_b(a).   %r = tn.chebyshev_polynomial_t %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.chebyshev_polynomial_t"


@irdl_op_definition
class ChebyshevPolynomialUOp(Binary):
    """Chebyshev polynomial of the second kind U_b(a).   %r = tn.chebyshev_polynomial_u %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.chebyshev_polynomial_u"


@irdl_op_definition
class ChebyshevPolynomialVOp(Binary):
    """Chebyshev polynomial of the third kind V_b(a).   %r = tn.chebyshev_polynomial_v %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.chebyshev_polynomial_v"


@irdl_op_definition
class ChebyshevPolynomialWOp(Binary):
    """Chebyshev polynomial of the fourth kind W_b(a).   %r = tn.chebyshev_polynomial_w %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.chebyshev_polynomial_w"


@irdl_op_definition
class ShiftedChebyshevPolynomialTOp(Binary):
    """Shifted Chebyshev polynomial of the first kind T*_b(a).   %r = tn.shifted_chebyshev_polynomial_t %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.shifted_chebyshev_polynomial_t"


@irdl_op_definition
class ShiftedChebyshevPolynomialUOp(Binary):
    """Shifted Chebyshev polynomial of the second kind U*_b(a).   %r = tn.shifted_chebyshev_polynomial_u %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.shifted_chebyshev_polynomial_u"


@irdl_op_definition
class ShiftedChebyshevPolynomialVOp(Binary):
    """Shifted Chebyshev polynomial of the third kind V*_b(a).   %r = tn.shifted_chebyshev_polynomial_v %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.shifted_chebyshev_polynomial_v"


@irdl_op_definition
class ShiftedChebyshevPolynomialWOp(Binary):
    """Shifted Chebyshev polynomial of the fourth kind W*_b(a).   %r = tn.shifted_chebyshev_polynomial_w %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.shifted_chebyshev_polynomial_w"


@irdl_op_definition
class HermitePolynomialHOp(Binary):
    """Physicists' Hermite polynomial H_b(a).   %r = tn.hermite_polynomial_h %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.hermite_polynomial_h"


@irdl_op_definition
class HermitePolynomialHeOp(Binary):
    """Probabilists' Hermite polynomial He_b(a).   %r = tn.hermite_polynomial_he %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.hermite_polynomial_he"


@irdl_op_definition
class LaguerrePolynomialLOp(Binary):
    """Laguerre polynomial L_b(a).   %r = tn.laguerre_polynomial_l %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.laguerre_polynomial_l"


@irdl_op_definition
class LegendrePolynomialPOp(Binary):
    """Legendre polynomial P_b(a).   %r = tn.legendre_polynomial_p %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>"""

    name = "tn.legendre_polynomial_p"
