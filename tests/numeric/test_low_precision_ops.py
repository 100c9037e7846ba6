"""Single bf16/f16 ops whose rounding the low-precision judge (low_precision.py) lets through by its one-ulp floor,
held to what eager computes: one rounding of the float32 result (correct rounding but for float32's own error).

A Python scalar operand: eager's CPU kernels for bf16 and f16 compute in float32 (opmath) with the scalar kept as a
float32 (TensorIterator's original scalar value), and round once. Rounding the scalar to the narrow type first
makes x * 0.1 up to 0.62 bf16 ulps off (0.1 is 0.10009765625 in bf16), x * 1e-3 up to 0.9 f16 ulps.
"""

import pytest
import torch

from tests.conftest import compile_irc

DTYPES = pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
F32_SLACK = 2.0**-10  # float32's own rounding before the narrow one, in narrow ulps (at most 2^-24 / 2^-11 * 2)


def ulps_off(got: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|got - exact| in units of the narrow dtype's spacing at |got| (subnormals included)."""
    mag = got.abs()
    spacing = torch.nextafter(mag, torch.full_like(mag, float("inf"))) - mag
    return (got.double() - exact).abs() / spacing.double()


OPS = {
    "mul": lambda x, c: x * c,
    "div": lambda x, c: x / c,
    "rdiv": lambda x, c: c / x,
    "add": lambda x, c: x + c,
}


def _check(fn, exact: torch.Tensor, *inputs, eager_rounds_once: bool = True) -> None:
    """fn(*inputs), eagerly and compiled, is `exact` correctly rounded to the dtype, within float32's slack
    (`eager_rounds_once=False`: eager itself rounds twice, so only the compiled result is held to it)."""
    if eager_rounds_once:
        assert ulps_off(fn(*inputs), exact).max() <= 0.5 + F32_SLACK  # eager: one rounding
    got = compile_irc(fn)(*inputs)
    assert got.dtype == inputs[0].dtype
    off = ulps_off(got, exact)
    worst = int(off.argmax())
    assert off.max() <= 0.5 + F32_SLACK, (
        f"{int((off > 0.5 + F32_SLACK).sum())} of {off.numel()} elements more than half an ulp off, worst"
        f" {off.max():.3g} ulp: irc {got[worst].item()}, exact {exact[worst].item()}"
    )


def _inputs(dtype, n=2):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(4096, generator=g).to(dtype) for _ in range(n)]


@DTYPES
@pytest.mark.parametrize(
    "op,c",
    [
        ("mul", 0.1),
        ("mul", 1e-3),
        ("div", 0.1),
        ("rdiv", 0.1),
    ],
)
def test_python_scalar_of_mul_and_div_is_used_in_float32(op, c, dtype):
    """x op c, c a Python float eager keeps in float32: the exact value correctly rounded. c / x is reciprocal(x) * c
    in eager as in Dynamo's graph (Tensor.__rtruediv__), rounded twice there (up to 1.2 ulps off); irc's fused chain
    keeps the reciprocal in float32 and rounds once."""
    (x,) = _inputs(dtype, 1)
    _check(lambda x: OPS[op](x, c), OPS[op](x.double(), c), x, eager_rounds_once=op != "rdiv")


@DTYPES
@pytest.mark.parametrize("op,c", [("mul", 0.375), ("div", 3.0), ("add", 0.1)])
def test_python_scalar_rounded_as_eager_rounds_it(op, c, dtype):
    """The same check where the scalar in the narrow type is what eager computes with (0.375 and 3.0 exactly;
    add's scalar, which eager itself rounds to the dtype): irc's result rounds once."""
    (x,) = _inputs(dtype, 1)
    narrow = torch.tensor(c).to(dtype).double()
    _check(lambda x: OPS[op](x, c), OPS[op](x.double(), narrow), x)


@DTYPES
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_with_alpha_rounds_once(op, dtype):
    """add/sub(x, y, alpha=0.1): x +- alpha * y with alpha in the dtype (as eager takes it), rounded once."""
    x, y = _inputs(dtype)
    alpha = torch.tensor(0.1).to(dtype).double()
    fn = getattr(torch, op)
    exact = x.double() + alpha * y.double() if op == "add" else x.double() - alpha * y.double()
    _check(lambda x, y: fn(x, y, alpha=0.1), exact, x, y)


@DTYPES
def test_addcdiv_with_value_rounds_once(dtype):
    """x + 0.5 * a / b, rounded once: Dynamo writes it as div, mul and add typed in the narrow dtype, and the fused
    chain keeps their intermediates in float32 (rounded per op, irc was hundreds of ulps off where it cancels)."""
    x, a, b = _inputs(dtype, 3)
    b = (b.abs() + 0.5).to(dtype)
    _check(lambda x, a, b: torch.addcdiv(x, a, b, value=0.5), x.double() + 0.5 * a.double() / b.double(), x, a, b)
