"""The meaning of the tn ops of elementwise math, reductions, scans, shapes and creation as torch calls:
`TENSOR_SEMANTICS[op class](op, *operand values)`, a tensor (a tuple for a multi-result op)."""

import torch

from irc.dialects import tensor as tn
from irc.dialects.tensor.fallback import decode_args, resolve_overload
from irc.dialects.tensor.lapack import option_values
from irc.ir.types import torch_dtype


def _dtype(v) -> torch.dtype:
    return torch_dtype(v.type.get_element_type())


def _ints(attr) -> list[int]:
    return list(attr.get_values())


def _int(attr) -> int:
    return attr.value.data


def _reduce(fn):
    """A tn reduction: keep rank; an empty dims list (0-d input) returns the operand."""
    return lambda op, x: fn(x, _ints(op.dims)) if _ints(op.dims) else x.clone()


def _var(op, x):
    return torch.var(x, dim=_ints(op.dims), correction=op.correction.value.data, keepdim=True)


def _argreduce(fn):
    return lambda op, x: fn(x, dim=_ints(op.dims)[0], keepdim=True)


def _fallback(op, *operands):
    # tn values have no layout: the eager kernel sees row-major operands (some aten kernels, such as
    # _embedding_bag_forward_only on strided indices, compute wrong results on other layouts).
    operands = [x.contiguous() if isinstance(x, torch.Tensor) else x for x in operands]
    args, kwargs = decode_args(op.args.data, operands)
    out = resolve_overload(op.target.data)(*args, **kwargs)
    leaves = out if isinstance(out, (list, tuple)) else [out]
    # A ZeroTensor (aten._efficientzerotensor and ops on it) has no storage: give real zeros.
    leaves = [
        torch.zeros(x.shape, dtype=x.dtype) if isinstance(x, torch.Tensor) and x._is_zerotensor() else x for x in leaves
    ]
    return tuple(x for x in leaves if x is not None)


def _linalg(op, *operands):
    """tn.linalg: its overload on the operands by schema name, each in the layout eager passed it (det and
    solve_triangular choose their algorithm by it), the options as aten's keyword arguments."""
    fn = op.function
    column_major = op.column_major_operands()
    tensors = [x.mT.contiguous().mT if i in column_major else x.contiguous() for i, x in enumerate(operands)]
    options = {k: v for k, v in option_values(fn, op.options).items() if v is not None}
    out = fn.overload(**dict(zip(op.operand_names(), tensors)), **options)
    return tuple(out) if isinstance(out, (tuple, list)) else out


def check_linalg(op, info):
    """tn.check_linalg: aten's own check, so the error and its message are eager's (it asserts a row-major info)."""
    torch.ops.aten._linalg_check_errors(info.contiguous(), op.api.data, is_matrix=op.matrix is not None)
    return ()


def _as_strided(op, x):
    x = x.contiguous()  # strides and offset count in the row-major elements of x; a slice starts past its storage's
    return torch.as_strided(
        x, tuple(op.result.type.get_shape()), _ints(op.strides), x.storage_offset() + _int(op.offset)
    ).clone()


def _pad(op, x, value):
    pad = []
    for lo, hi in reversed(list(zip(_ints(op.low), _ints(op.high)))):
        pad += [lo, hi]
    return torch.constant_pad_nd(x, pad, value.item())


def _result_shape(op, sizes):
    it = iter(sizes)
    return [next(it) if d < 0 else d for d in op.result.type.get_shape()]


TENSOR_SEMANTICS = {
    # unary
    tn.NegOp: lambda op, x: torch.neg(x),
    tn.AbsOp: lambda op, x: torch.abs(x),
    tn.ExpOp: lambda op, x: torch.exp(x),
    tn.Exp2Op: lambda op, x: torch.exp2(x),
    tn.Expm1Op: lambda op, x: torch.expm1(x),
    tn.LogOp: lambda op, x: torch.log(x),
    tn.Log2Op: lambda op, x: torch.log2(x),
    tn.Log10Op: lambda op, x: torch.log10(x),
    tn.Log1pOp: lambda op, x: torch.log1p(x),
    tn.SqrtOp: lambda op, x: torch.sqrt(x),
    tn.RsqrtOp: lambda op, x: torch.rsqrt(x),
    tn.ReciprocalOp: lambda op, x: torch.reciprocal(x),
    tn.SinOp: lambda op, x: torch.sin(x),
    tn.CosOp: lambda op, x: torch.cos(x),
    tn.TanOp: lambda op, x: torch.tan(x),
    tn.AsinOp: lambda op, x: torch.asin(x),
    tn.AcosOp: lambda op, x: torch.acos(x),
    tn.AtanOp: lambda op, x: torch.atan(x),
    tn.SinhOp: lambda op, x: torch.sinh(x),
    tn.CoshOp: lambda op, x: torch.cosh(x),
    tn.TanhOp: lambda op, x: torch.tanh(x),
    tn.AsinhOp: lambda op, x: torch.asinh(x),
    tn.AcoshOp: lambda op, x: torch.acosh(x),
    tn.AtanhOp: lambda op, x: torch.atanh(x),
    tn.SigmoidOp: lambda op, x: torch.sigmoid(x),
    tn.ErfOp: lambda op, x: torch.erf(x),
    tn.ErfinvOp: lambda op, x: torch.erfinv(x),
    tn.LgammaOp: lambda op, x: torch.lgamma(x),
    tn.DigammaOp: lambda op, x: torch.digamma(x),
    tn.FloorOp: lambda op, x: torch.floor(x),
    tn.CeilOp: lambda op, x: torch.ceil(x),
    tn.RoundOp: lambda op, x: torch.round(x),
    tn.TruncOp: lambda op, x: torch.trunc(x),
    tn.SignOp: lambda op, x: torch.sign(x),
    tn.ReluOp: lambda op, x: torch.relu(x),
    tn.BitwiseNotOp: lambda op, x: torch.bitwise_not(x),
    tn.GeluOp: lambda op, x: torch.nn.functional.gelu(x, approximate=op.approximate.data),
    tn.IsNanOp: lambda op, x: torch.isnan(x),
    tn.IsInfOp: lambda op, x: torch.isinf(x),
    tn.LogicalNotOp: lambda op, x: torch.logical_not(x),
    tn.SignbitOp: lambda op, x: torch.signbit(x),
    # binary
    tn.AddOp: lambda op, a, b: torch.add(a, b),
    tn.SubOp: lambda op, a, b: torch.sub(a, b),
    tn.MulOp: lambda op, a, b: torch.mul(a, b),
    tn.DivOp: lambda op, a, b: torch.div(a, b),
    tn.FloorDivOp: lambda op, a, b: torch.div(a, b, rounding_mode="floor"),
    tn.TruncDivOp: lambda op, a, b: torch.div(a, b, rounding_mode="trunc"),
    tn.RemainderOp: lambda op, a, b: torch.remainder(a, b),
    tn.FmodOp: lambda op, a, b: torch.fmod(a, b),
    tn.PowOp: lambda op, a, b: torch.pow(a, b),
    tn.MaximumOp: lambda op, a, b: torch.maximum(a, b),
    tn.MinimumOp: lambda op, a, b: torch.minimum(a, b),
    tn.FmaxOp: lambda op, a, b: torch.fmax(a, b),
    tn.FminOp: lambda op, a, b: torch.fmin(a, b),
    tn.GcdOp: lambda op, a, b: torch.gcd(a, b),
    tn.LcmOp: lambda op, a, b: torch.lcm(a, b),
    tn.Atan2Op: lambda op, a, b: torch.atan2(a, b),
    tn.HypotOp: lambda op, a, b: torch.hypot(a, b),
    tn.CopysignOp: lambda op, a, b: torch.copysign(a, b),
    tn.NextafterOp: lambda op, a, b: torch.nextafter(a, b),
    tn.BitwiseAndOp: lambda op, a, b: torch.bitwise_and(a, b),
    tn.BitwiseOrOp: lambda op, a, b: torch.bitwise_or(a, b),
    tn.BitwiseXorOp: lambda op, a, b: torch.bitwise_xor(a, b),
    tn.ShiftLeftOp: lambda op, a, b: torch.bitwise_left_shift(a, b),
    tn.ShiftRightOp: lambda op, a, b: torch.bitwise_right_shift(a, b),
    tn.EqOp: lambda op, a, b: torch.eq(a, b),
    tn.NeOp: lambda op, a, b: torch.ne(a, b),
    tn.LtOp: lambda op, a, b: torch.lt(a, b),
    tn.LeOp: lambda op, a, b: torch.le(a, b),
    tn.GtOp: lambda op, a, b: torch.gt(a, b),
    tn.GeOp: lambda op, a, b: torch.ge(a, b),
    tn.WhereOp: lambda op, c, a, b: torch.where(c, a, b),
    tn.ConvertOp: lambda op, x: x.to(_dtype(op.result)),
    # reductions and scans
    tn.SumOp: _reduce(lambda x, d: torch.sum(x, d, keepdim=True)),
    tn.ProdOp: lambda op, x: _prod(x, _ints(op.dims)),
    tn.MeanOp: _reduce(lambda x, d: torch.mean(x, d, keepdim=True)),
    tn.AmaxOp: _reduce(lambda x, d: torch.amax(x, d, keepdim=True)),
    tn.AminOp: _reduce(lambda x, d: torch.amin(x, d, keepdim=True)),
    tn.AnyOp: lambda op, x: torch.any(x, dim=_ints(op.dims), keepdim=True) if _ints(op.dims) else x.bool(),
    tn.AllOp: lambda op, x: torch.all(x, dim=_ints(op.dims), keepdim=True) if _ints(op.dims) else x.bool(),
    tn.ArgmaxOp: _argreduce(torch.argmax),
    tn.ArgminOp: _argreduce(torch.argmin),
    tn.VarOp: _var,
    tn.CumsumOp: lambda op, x: torch.cumsum(x, _int(op.dim)),
    tn.LogcumsumexpOp: lambda op, x: torch.logcumsumexp(x, _int(op.dim)),
    tn.CummaxOp: lambda op, x: tuple(torch.cummax(x, _int(op.dim))),
    tn.CumminOp: lambda op, x: tuple(torch.cummin(x, _int(op.dim))),
    tn.CumprodOp: lambda op, x: torch.cumprod(x, _int(op.dim)),
    # sorting: torch's kernels (their order among equal values is the op's)
    tn.SortOp: lambda op, x: tuple(
        torch.sort(x, stable=op.stable is not None, dim=_int(op.dim), descending=op.descending is not None)
    ),
    tn.TopkOp: lambda op, x: tuple(
        torch.topk(x, _int(op.k), _int(op.dim), op.largest is not None, op.sorted is not None)
    ),
    tn.KthvalueOp: lambda op, x: tuple(torch.kthvalue(x, _int(op.k), _int(op.dim), keepdim=True)),
    tn.MedianOp: lambda op, x: tuple(
        (torch.nanmedian if op.ignore_nan is not None else torch.median)(x, _int(op.dim), keepdim=True)
    ),
    tn.ModeOp: lambda op, x: tuple(torch.mode(x, _int(op.dim), keepdim=True)),
    tn.LinalgOp: _linalg,
    tn.CheckLinalgOp: check_linalg,
    # shapes
    tn.ReshapeOp: lambda op, x, *s: x.reshape(_result_shape(op, s)),
    tn.ExpandOp: lambda op, x, *s: x.expand(_result_shape(op, s)),
    tn.PermuteOp: lambda op, x: x.permute(_ints(op.perm)),
    tn.SqueezeOp: lambda op, x: x.squeeze(_ints(op.dims)) if _ints(op.dims) else x,
    tn.UnsqueezeOp: lambda op, x: x.unsqueeze(_int(op.dim)),
    tn.SliceOp: lambda op, x: torch.ops.aten.slice(x, _int(op.dim), _int(op.start), _int(op.end), _int(op.step)),
    tn.SelectOp: lambda op, x: torch.select(x, _int(op.dim), _int(op.index)),
    tn.CatOp: lambda op, *xs: torch.cat(xs, _int(op.dim)),
    tn.FlipOp: lambda op, x: torch.flip(x, _ints(op.dims)),
    tn.AsStridedOp: _as_strided,
    tn.PadOp: _pad,
    tn.DimOp: lambda op, x: x.shape[_int(op.dim)],
    # creation
    tn.ConstantOp: lambda op: torch.tensor(_constant_value(op), dtype=_dtype(op.result)).reshape(
        op.result.type.get_shape()
    ),
    tn.FromIndexOp: lambda op, n: torch.tensor(n, dtype=_dtype(op.result)),
    tn.IotaOp: lambda op, *s: torch.arange(_result_shape(op, s)[0], dtype=_dtype(op.result)),
    tn.RandOp: lambda op, *s: torch.rand(_result_shape(op, s), dtype=_dtype(op.result)),
    tn.RandnOp: lambda op, *s: torch.randn(_result_shape(op, s), dtype=_dtype(op.result)),
    tn.AtenCallOp: _fallback,
}


def _prod(x, dims):
    for d in dims:
        x = torch.prod(x, d, keepdim=True)
    return x if dims else x.clone()


def _constant_value(op):
    data = op.value.get_values()
    return list(data)


# Special functions: the aten kernel of the same name, on operands already in the result dtype.
_SPECIAL_ATEN = {
    tn.I0Op: "i0",
    tn.I0eOp: "special_i0e",
    tn.I1Op: "special_i1",
    tn.I1eOp: "special_i1e",
    tn.NdtriOp: "special_ndtri",
    tn.ErfcOp: "erfc",
    tn.ErfcxOp: "special_erfcx",
    tn.AiryAiOp: "special_airy_ai",
    tn.BesselJ0Op: "special_bessel_j0",
    tn.BesselJ1Op: "special_bessel_j1",
    tn.BesselY0Op: "special_bessel_y0",
    tn.BesselY1Op: "special_bessel_y1",
    tn.ModifiedBesselI0Op: "special_modified_bessel_i0",
    tn.ModifiedBesselI1Op: "special_modified_bessel_i1",
    tn.ModifiedBesselK0Op: "special_modified_bessel_k0",
    tn.ModifiedBesselK1Op: "special_modified_bessel_k1",
    tn.ScaledModifiedBesselK0Op: "special_scaled_modified_bessel_k0",
    tn.ScaledModifiedBesselK1Op: "special_scaled_modified_bessel_k1",
    tn.SphericalBesselJ0Op: "special_spherical_bessel_j0",
    tn.ZetaOp: "special_zeta",
    tn.IgammaOp: "igamma",
    tn.IgammacOp: "igammac",
    tn.ChebyshevPolynomialTOp: "special_chebyshev_polynomial_t",
    tn.ChebyshevPolynomialUOp: "special_chebyshev_polynomial_u",
    tn.ChebyshevPolynomialVOp: "special_chebyshev_polynomial_v",
    tn.ChebyshevPolynomialWOp: "special_chebyshev_polynomial_w",
    tn.ShiftedChebyshevPolynomialTOp: "special_shifted_chebyshev_polynomial_t",
    tn.ShiftedChebyshevPolynomialUOp: "special_shifted_chebyshev_polynomial_u",
    tn.ShiftedChebyshevPolynomialVOp: "special_shifted_chebyshev_polynomial_v",
    tn.ShiftedChebyshevPolynomialWOp: "special_shifted_chebyshev_polynomial_w",
    tn.HermitePolynomialHOp: "special_hermite_polynomial_h",
    tn.HermitePolynomialHeOp: "special_hermite_polynomial_he",
    tn.LaguerrePolynomialLOp: "special_laguerre_polynomial_l",
    tn.LegendrePolynomialPOp: "special_legendre_polynomial_p",
}
for _cls, _name in _SPECIAL_ATEN.items():
    TENSOR_SEMANTICS[_cls] = (lambda f: lambda op, *xs: f(*xs))(getattr(torch.ops.aten, _name).default)
TENSOR_SEMANTICS[tn.FrexpOp] = lambda op, x: tuple(torch.frexp(x))
TENSOR_SEMANTICS[tn.PolygammaOp] = lambda op, x: torch.polygamma(_int(op.n), x)
