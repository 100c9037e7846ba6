"""Regression tests for core-op translations fixed through the OpInfo sweep: irc (strict) vs eager."""

import pytest
import torch
import torch.nn.functional as F

import irc
from tests.conftest import compile_irc


def check(fn, *inputs, native=True, dynamic=None, **kw):
    """fn compiled with irc matches eager on `inputs` (and, with native=True, runs without any fallback)."""
    expected = fn(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    got = compile_irc(fn, dynamic=dynamic)(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    torch.testing.assert_close(got, expected, equal_nan=True, **kw)
    if native:
        rep = irc.explain(fn, *inputs, options={"strict": True}, dynamic=dynamic)
        assert rep.native, str(rep)
    return got


def strided(*shape, dtype=torch.float32):
    """A non-contiguous tensor of `shape` (every other column of a wider one)."""
    wide = (
        torch.randn(*shape[:-1], shape[-1] * 2)
        if dtype.is_floating_point
        else torch.randint(-9, 9, (*shape[:-1], shape[-1] * 2))
    )
    return wide.to(dtype)[..., ::2]


# ---- arg reductions of 0-d tensors ------------------------------------------------------------------


@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin_of_0d(dim, keepdim):
    x = torch.tensor(3.5)
    check(lambda t: (torch.argmax(t, dim, keepdim), torch.argmin(t, dim, keepdim)), x)


def test_argmax_non_contiguous_and_int():
    check(lambda t: torch.argmax(t, 1), strided(5, 7))
    check(lambda t: torch.argmin(t, 0, keepdim=True), strided(3, 13, dtype=torch.int32))


# ---- constants take torch's cast of the scalar -----------------------------------------------------


def test_scalar_wraps_like_torch_in_uint8():
    x = torch.arange(0, 250, 7, dtype=torch.uint8)
    check(lambda t: t + 300, x)


def test_huge_scalar_rounds_to_inf_in_float32():
    check(lambda t: torch.maximum(t, torch.tensor(1e300, dtype=torch.float64).float()) * 0 + t * 1e300, torch.randn(5))


def test_complex_pad_falls_back_instead_of_crashing():
    x = torch.randn(3, 5, dtype=torch.complex64)
    check(lambda t: F.pad(t, (1, 2)), x, native=False)


# ---- output layouts --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 7), (5, 1), (1,)])
def test_expanded_output_keeps_eager_strides(shape):
    fn = lambda t: t.expand(3, *shape[:-1], 7) if len(shape) > 1 else t.expand(4, 7)  # noqa: E731
    x = torch.randn(*shape)
    got = check(fn, x)
    assert got.stride() == fn(x).stride()


def test_broadcast_tensors_outputs():
    a, b = torch.randn(4, 1), torch.randn(1, 5)
    check(lambda x, y: torch.broadcast_tensors(x, y), a, b)


# ---- the eager fallback sees row-major operands ----------------------------------------------------


def test_fallback_on_strided_operand_matches_eager():
    w = torch.randn(10, 5)
    idx = torch.tensor([1, 0, 2, 0, 3, 0, 4, 0, 5, 0])[::2]  # non-contiguous indices
    off = torch.tensor([0, 3])
    psw = torch.randn(5)
    fn = lambda w, i, o, p: F.embedding_bag(i, w, offsets=o, mode="sum", per_sample_weights=p)  # noqa: E731
    check(fn, w, idx, off, psw, native=False)


# ---- special functions --------------------------------------------------------------------------------

SPECIAL_UNARY = [
    torch.special.i0,
    torch.special.i0e,
    torch.special.i1,
    torch.special.i1e,
    torch.special.ndtri,
    torch.special.erfc,
    torch.special.erfcx,
    torch.special.airy_ai,
    torch.special.bessel_j0,
    torch.special.bessel_j1,
    torch.special.bessel_y0,
    torch.special.bessel_y1,
    torch.special.modified_bessel_i0,
    torch.special.modified_bessel_i1,
    torch.special.modified_bessel_k0,
    torch.special.modified_bessel_k1,
    torch.special.scaled_modified_bessel_k0,
    torch.special.scaled_modified_bessel_k1,
    torch.special.spherical_bessel_j0,
]


@pytest.mark.parametrize("fn", SPECIAL_UNARY, ids=lambda f: f.__name__)
def test_special_unary(fn):
    check(fn, strided(3, 7).abs() + 0.1)  # non-contiguous, positive (K and Y are real only there)
    check(fn, torch.randint(1, 5, (13,), dtype=torch.int32))  # int promotes to float
    check(fn, torch.rand(1) * 0.9)


SPECIAL_BINARY = [
    torch.special.zeta,
    torch.igamma,
    torch.igammac,
    torch.special.chebyshev_polynomial_t,
    torch.special.chebyshev_polynomial_u,
    torch.special.chebyshev_polynomial_v,
    torch.special.chebyshev_polynomial_w,
    torch.special.shifted_chebyshev_polynomial_t,
    torch.special.shifted_chebyshev_polynomial_u,
    torch.special.shifted_chebyshev_polynomial_v,
    torch.special.shifted_chebyshev_polynomial_w,
    torch.special.hermite_polynomial_h,
    torch.special.hermite_polynomial_he,
    torch.special.laguerre_polynomial_l,
    torch.special.legendre_polynomial_p,
]


@pytest.mark.parametrize("fn", SPECIAL_BINARY, ids=lambda f: f.__name__)
def test_special_binary_broadcasts(fn):
    a = torch.rand(5, 1) + 1.5
    n = torch.randint(0, 6, (7,)).float()
    check(fn, a, n)
    check(fn, strided(2, 3).abs() + 1.5, torch.tensor(3.0))


@pytest.mark.parametrize(
    "fn", [torch.special.chebyshev_polynomial_t, torch.special.hermite_polynomial_h, torch.special.zeta]
)
def test_special_binary_scalar_operand(fn):
    x = torch.rand(11) + 1.5
    check(lambda t: fn(t, 3), x)
    check(lambda t: fn(2.5, t), x)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma(n):
    check(lambda t: torch.polygamma(n, t), strided(4, 5).abs() + 0.5)
    check(lambda t: torch.special.polygamma(n, t), torch.randint(1, 9, (6,)))


def test_special_dynamic_dim():
    f = lambda t: torch.special.i0e(t) + torch.special.zeta(t + 2, t.abs() + 1)  # noqa: E731
    for n in (3, 17):
        check(f, torch.randn(n, 4), dynamic=True)


# ---- var_mean, round(decimals) ------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [None, 1, (0, 2), -1])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_mean_and_std_mean(dim, correction):
    x = torch.randn(3, 7, 5).transpose(0, 2)  # non-contiguous (5, 7, 3)
    check(lambda t: torch.var_mean(t, dim, correction=correction), x)
    check(lambda t: torch.std_mean(t, dim, correction=correction, keepdim=True), x)


def test_var_mean_size_one_and_dynamic():
    check(lambda t: torch.var_mean(t, 0), torch.randn(1, 4))  # correction 1 over one element: NaN
    for n in (2, 11):
        check(lambda t: torch.var_mean(t, -1), torch.randn(3, n), dynamic=True)


@pytest.mark.parametrize("decimals", [0, 1, 3, -1, -2])
def test_round_decimals(decimals):
    x = torch.randn(7, 11) * 100
    check(lambda t: torch.round(t, decimals=decimals), x)
    check(lambda t: torch.round(t, decimals=decimals), x.double().t())


def test_round_decimals_half_falls_back():
    x = (torch.randn(13) * 10).half()
    check(lambda t: torch.round(t, decimals=2), x, native=False)


# ---- diagonal, unfold, narrow_copy (strided reads of the row-major value) ----------------------------


@pytest.mark.parametrize("offset", [0, 1, -2, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (2, 1)])
def test_diagonal(offset, dims):
    x = strided(3, 4, 5)
    check(lambda t: torch.diagonal(t, offset, *dims) * 2, x)


def test_diag_and_trace():
    check(lambda t: (torch.diag(t, 1), torch.trace(t)), torch.randn(5, 7).t())
    check(lambda t: torch.diagonal(t), torch.randint(0, 9, (6, 6), dtype=torch.int32))


@pytest.mark.parametrize("args", [(0, 2, 1), (1, 3, 2), (-1, 1, 1), (2, 5, 3)])
def test_unfold(args):
    check(lambda t: t.unfold(*args) + 1, strided(4, 6, 5))


def test_unfold_of_0d():
    check(lambda t: t.unfold(0, 1, 1), torch.tensor(2.0))


@pytest.mark.parametrize("start,length", [(0, 2), (1, 3), (-3, 2)])
def test_narrow_copy(start, length):
    check(lambda t: torch.narrow_copy(t, 1, start, length), strided(3, 5))


# ---- ops that become core ops through decompositions ------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: F.elu(t, alpha=0.7),
        F.selu,
        lambda t: F.hardtanh(t, -0.5, 0.25),
        F.relu6,
        lambda t: F.leaky_relu(t, 0.2),
    ],
    ids=["elu", "selu", "hardtanh", "relu6", "leaky_relu"],
)
def test_activation_decompositions(fn):
    check(fn, strided(4, 9) * 3)
    check(fn, torch.randn(1))


@pytest.mark.parametrize("ord", [2, 1, 3.5, float("inf"), -float("inf"), 0])
def test_vector_norm(ord):
    x = torch.randn(64, 129, generator=torch.Generator().manual_seed(0))
    # 8,256 terms summed in another order than eager's: float32 rounding of such a sum is about sqrt(n) ulps (the
    # default rtol, 1.3e-6, failed 4 runs in 10 at ord=1 on unseeded inputs)
    check(lambda t: torch.linalg.vector_norm(t, ord), x, rtol=4 * 2**-23 * (x.numel() ** 0.5), atol=1e-5)
    check(lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), x.t())


def test_norm_based_functionals():
    a, b = torch.randn(8, 33), torch.randn(8, 33)
    check(lambda x, y: (torch.dist(x, y), torch.dist(x, y, 3)), a, b)
    check(lambda x, y: F.cosine_similarity(x, y), a, b)
    check(lambda x: F.normalize(x, dim=0), a)


def test_ldexp_and_addmv():
    check(lambda x, e: torch.ldexp(x, e), torch.randn(5, 3), torch.randint(-4, 4, (3,)))
    check(lambda v, m, x: torch.addmv(v, m, x, beta=0.5, alpha=2), torch.randn(4), torch.randn(4, 7), torch.randn(7))


def test_fmax_fmin_ignore_nan():
    a = torch.tensor([1.0, float("nan"), 3.0, float("nan"), -0.0])
    b = torch.tensor([2.0, 1.0, float("nan"), float("nan"), 0.0])
    check(lambda x, y: (torch.fmax(x, y), torch.fmin(x, y)), a, b)
    check(lambda x, y: torch.fmax(x, y), strided(3, 4), torch.randn(4))
    check(lambda x, y: torch.fmin(x, y), torch.randint(0, 5, (6,)), torch.randint(0, 5, (1,)))


# ---- scans --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin_logcumsumexp(dim):
    x = strided(5, 7)
    x[1, 2] = float("nan")
    x[3, :] = 1.0  # ties: the index of the last equal element
    check(lambda t: (torch.cummax(t, dim), torch.cummin(t, dim)), x)
    check(lambda t: torch.logcumsumexp(t, dim), strided(4, 6) * 30)


def test_scans_on_ints_0d_and_dynamic():
    check(lambda t: torch.cummax(t, 0), torch.randint(-5, 5, (13,), dtype=torch.int32))
    check(lambda t: (torch.cummin(t, 0), torch.logcumsumexp(t, 0)), torch.tensor(1.5))
    for n in (1, 9):
        check(lambda t: torch.cummax(t, -1).values + torch.logcumsumexp(t, -1), torch.randn(2, n), dynamic=True)


def test_angle_of_real_tensors():
    x = torch.tensor([-2.0, -0.0, 0.0, 3.0, float("nan"), -float("inf")])
    check(torch.angle, x)
    check(torch.angle, strided(3, 5))
    check(torch.angle, torch.randint(-3, 3, (7,)))
    check(torch.angle, torch.tensor([True, False]))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_gcd_lcm(dtype):
    a = torch.randint(0, 60, (5, 7), dtype=dtype)
    b = torch.randint(0, 60, (7,), dtype=dtype)
    check(lambda x, y: (torch.gcd(x, y), torch.lcm(x, y)), a, b)
    check(lambda x, y: torch.gcd(x, y), a.t(), torch.tensor(12, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_frexp(dtype):
    x = torch.tensor([0.0, -0.0, 1.0, -3.5, 1e-30, float("inf"), float("nan"), 6.0e4]).to(dtype)
    check(lambda t: torch.frexp(t), x)
    check(lambda t: torch.frexp(t * 3), strided(3, 4).to(dtype))


def test_python_floats_keep_double_precision_in_float64_graphs():
    """A Python float is a double: x + 1.3 on float64 adds 1.3 as a double (it was rounded to float32 first, 4.8e-8
    off, within the fuzzer's float64 tolerance), and a constant below float32's range stays nonzero."""
    x = torch.randn(33, dtype=torch.float64)
    for fn in (lambda t: t + 1.3, lambda t: t * 0.1 - 1e-10, lambda t: torch.where(t > 0.3, t, 1e-300)):
        assert torch.equal(compile_irc(fn)(x), fn(x))


@pytest.mark.parametrize("where", [None, "nan", "inf"])
def test_whole_tensor_min_max_any_all_in_two_steps(where):
    """A large whole-tensor amin / amax / any / all runs as rows then the rows' results (simplify-tensor's
    split_whole_reduction): eager's answers, NaN and infinities included, on contiguous, strided and odd sizes."""
    x = torch.randn(3, 131, 257)
    if where is not None:
        x[2, 100, 17] = float(where)
        x[0, 3, 256] = -float(where)
    fn = lambda x: (x.amin(), x.amax(), (x > 3.5).any(), (x > -5).all(), x.aminmax())  # noqa: E731
    check(fn, x)
    check(fn, strided(7, 97, 103))
