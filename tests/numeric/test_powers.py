"""Powers of a constant exponent (lowering/simplify_tensor.py: pow_of_small_exponent): the exponents ATen's pow
kernel writes out (2, 3, -2, 0.5, -0.5, -1) compile to those expressions and give eager's numbers bit for bit in
float32 and float64 (special values included); in bfloat16 and float16, where a fused chain keeps the power in
float32 and rounds once at the store while eager rounds it before the next op, the results pass the low-precision
judge (tests/numeric/low_precision.py) against float64; half precision and other exponents stay powers; the
gradient of x ** 3 (3 * x ** 2) too; and the compiled graph has no pow left."""

import pytest
import torch

import irc
from irc.ir import print_module
from tests.conftest import compile_irc
from tests.numeric.low_precision import assert_low_precision_close

EXPONENTS = [2.0, 3.0, -2.0, 0.5, -1.0, 2.5]
SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-30, -1.0, 1.0]


def inputs(dtype, n=37):
    x = torch.randn(5, n, generator=torch.Generator().manual_seed(0)) * 3
    x[0, : len(SPECIAL)] = torch.tensor(SPECIAL)
    return x.to(dtype)


def same(got, want):
    return torch.equal(got.isnan(), want.isnan()) and torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("e", EXPONENTS)
def test_power_of_a_constant(dtype, e):
    fn = lambda t: t.pow(e) * 2 + 1  # noqa: E731
    x = inputs(dtype)
    got, want = compile_irc(fn)(x), fn(x)
    if dtype in (torch.bfloat16, torch.float16):
        assert_low_precision_close(got, want, fn(x.double()), dtype)
    elif e == 0.5 and dtype in (torch.float32, torch.float64):
        # ATen's vectorised sqrt is not always correctly rounded (one ulp in ~15% of floats); irc's is
        torch.testing.assert_close(got, want, rtol=3e-7 if dtype == torch.float32 else 1e-15, atol=0, equal_nan=True)
    elif e == 2.5 and dtype in (torch.float32, torch.float64):  # a pow in both: within the library's error
        torch.testing.assert_close(got, want, equal_nan=True)
    else:
        assert same(got, want), (got - want).abs().nan_to_num().max()


def test_rsqrt_exponent_keeps_eagers_special_values():
    fn = lambda t: t.pow(-0.5)  # noqa: E731
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.tensor(SPECIAL * 3, dtype=dtype)
        got, want = compile_irc(fn)(x), fn(x)
        assert same(got, want), (dtype, got, want)


def test_gelu_tanh_approximation_compiles_natively_and_its_gradient_is_eagers():
    """GPT-2's gelu: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); its backward squares x."""

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))

    x = inputs(torch.float32, 129)[1:].requires_grad_()
    y = x.detach().clone().requires_grad_()
    gelu_new(x).sum().backward()
    compile_irc(gelu_new)(y).sum().backward()
    torch.testing.assert_close(y.grad, x.grad, rtol=1e-5, atol=1e-6)
    rep = irc.explain(gelu_new, x.detach(), options={"strict": True})
    assert rep.native, str(rep)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gelu_tanh_written_out_in_half_precision_is_a_sigmoid_and_as_accurate_as_eager(dtype, tmp_path):
    """In bf16 and f16 GPT-2's written-out gelu becomes x sigmoid(2t) (simplify-tensor): judged against float64 as
    low precision is (no worse than 1.5x eager's own error), over the whole range, the far negative tail included,
    where eager's 1 + tanh(t) cancels."""

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))

    x = torch.cat([torch.linspace(-12, 12, 4001), torch.randn(999, generator=torch.Generator().manual_seed(0))])
    x = x.to(dtype)
    got = compile_irc(gelu_new, dump_dir=str(tmp_path))(x)
    assert_low_precision_close(got, gelu_new(x), gelu_new(x.double()), dtype)
    (tensor_opt,) = tmp_path.glob("*/*-tensor-opt.mlir")  # numbered by the stages run (freeze or not)
    assert "tn.sigmoid" in tensor_opt.read_text() and "tn.tanh" not in tensor_opt.read_text()


def test_the_loop_stage_has_no_pow_for_a_cube():
    from torch.fx.experimental.proxy_tensor import make_fx

    from irc.frontend.fx_import import import_graph
    from irc.lowering import pipeline

    gm = make_fx(lambda t: torch.pow(t, 3.0) + torch.pow(t, 2.5))(torch.randn(4, 8))
    module = import_graph(gm, frozenset()).module
    pipeline.run(module, stop="loop")
    assert print_module(module).count("math.powf") == 1, print_module(module)  # only the 2.5
