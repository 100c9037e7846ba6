"""Special functions (torch.special and friends): one tn op each, operands cast to the result dtype first."""

import torch

from irc.dialects import tensor as tn

from ..aten_table import Unsupported, imports
from .elementwise import binary, out_dtype, unary

aten = torch.ops.aten

UNARY = {
    "i0": tn.I0Op,
    "special_i0e": tn.I0eOp,
    "special_i1": tn.I1Op,
    "special_i1e": tn.I1eOp,
    "special_ndtri": tn.NdtriOp,
    "erfc": tn.ErfcOp,
    "special_erfcx": tn.ErfcxOp,
    "special_airy_ai": tn.AiryAiOp,
    "special_bessel_j0": tn.BesselJ0Op,
    "special_bessel_j1": tn.BesselJ1Op,
    "special_bessel_y0": tn.BesselY0Op,
    "special_bessel_y1": tn.BesselY1Op,
    "special_modified_bessel_i0": tn.ModifiedBesselI0Op,
    "special_modified_bessel_i1": tn.ModifiedBesselI1Op,
    "special_modified_bessel_k0": tn.ModifiedBesselK0Op,
    "special_modified_bessel_k1": tn.ModifiedBesselK1Op,
    "special_scaled_modified_bessel_k0": tn.ScaledModifiedBesselK0Op,
    "special_scaled_modified_bessel_k1": tn.ScaledModifiedBesselK1Op,
    "special_spherical_bessel_j0": tn.SphericalBesselJ0Op,
}

BINARY = {
    "special_zeta": tn.ZetaOp,
    "igamma": tn.IgammaOp,
    "igammac": tn.IgammacOp,
    "special_chebyshev_polynomial_t": tn.ChebyshevPolynomialTOp,
    "special_chebyshev_polynomial_u": tn.ChebyshevPolynomialUOp,
    "special_chebyshev_polynomial_v": tn.ChebyshevPolynomialVOp,
    "special_chebyshev_polynomial_w": tn.ChebyshevPolynomialWOp,
    "special_shifted_chebyshev_polynomial_t": tn.ShiftedChebyshevPolynomialTOp,
    "special_shifted_chebyshev_polynomial_u": tn.ShiftedChebyshevPolynomialUOp,
    "special_shifted_chebyshev_polynomial_v": tn.ShiftedChebyshevPolynomialVOp,
    "special_shifted_chebyshev_polynomial_w": tn.ShiftedChebyshevPolynomialWOp,
    "special_hermite_polynomial_h": tn.HermitePolynomialHOp,
    "special_hermite_polynomial_he": tn.HermitePolynomialHeOp,
    "special_laguerre_polynomial_l": tn.LaguerrePolynomialLOp,
    "special_legendre_polynomial_p": tn.LegendrePolynomialPOp,
}

for _name, _cls in UNARY.items():
    unary(getattr(aten, _name).default, _cls)

for _name, _cls in BINARY.items():
    for _ov in ("default", "x_scalar", "n_scalar", "self_scalar", "other_scalar"):
        if hasattr(getattr(aten, _name), _ov):
            binary(getattr(getattr(aten, _name), _ov), _cls)


@imports(aten.polygamma.default)
def import_polygamma(b, node, n, x):
    if not isinstance(n, int) or n < 0:
        raise Unsupported(f"polygamma of order {n!r}")
    return b.add(tn.PolygammaOp(b.tensor(x, out_dtype(node)), n))


@imports(aten.frexp.Tensor)
def import_frexp(b, node, x):
    if not b.dtype(x).is_floating_point:
        raise Unsupported(f"frexp of {b.dtype(x)}")
    op = b.insert(tn.FrexpOp(x))
    return op.mantissa, op.exponent
