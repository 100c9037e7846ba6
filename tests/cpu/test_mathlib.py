"""mathlib: each function JITed into a kernel (16-lane body + scalar tail), float32 ulp error vs float64 torch."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from llvmlite import ir

from irc.targets.cpu.codegen import mathlib
from tests.cpu.ulp import jit_map, ulp_error, worst

N = 1_000_001
INF, NAN = math.inf, math.nan
EDGE = torch.tensor(
    [
        0.0,
        -0.0,
        INF,
        -INF,
        NAN,
        1e-45,
        -1e-45,
        1e-38,
        -1e-38,
        1.17e-38,
        3.4e38,
        -3.4e38,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        1e-7,
        -1e-7,
        88.72,
        88.73,
        -87.3,
        -103.9,
        -104.0,
    ]
)


def lin(lo, hi, n=N):
    return torch.linspace(lo, hi, n, dtype=torch.float64).float()


def positives(n=N):
    """Random bit patterns over every positive finite float, subnormals included."""
    g = torch.Generator().manual_seed(0)
    return torch.randint(1, 0x7F800000, (n,), dtype=torch.int32, generator=g).view(torch.float32)


def ref_gelu(x):
    return torch.where(torch.isfinite(x), 0.5 * x * torch.special.erfc(-x / math.sqrt(2)), F.gelu(x))


def ref_gelu_tanh(x):
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    return torch.where(torch.isfinite(x), x * torch.sigmoid(2 * u), F.gelu(x, approximate="tanh"))


# name: (float64 reference, sweeps, max ulp allowed)
CASES = {
    "exp": (torch.exp, [lin(-104, 89), lin(-1, 1)], 2),
    "exp2": (torch.exp2, [lin(-150, 128)], 2),
    "expm1": (torch.special.expm1, [lin(-18, 89), lin(-1e-3, 1e-3)], 3),
    "log": (torch.log, [positives(), lin(0.5, 2)], 2),
    "log2": (torch.log2, [positives(), lin(0.5, 2)], 3),
    "log10": (torch.log10, [positives(), lin(0.5, 2)], 3),
    "log1p": (torch.log1p, [lin(-1, 10), positives(), -positives().clamp(max=1)], 3),
    "tanh": (torch.tanh, [lin(-10, 10), lin(-1e-3, 1e-3)], 2),
    "sigmoid": (torch.sigmoid, [lin(-104, 90)], 3),
    "erf": (
        torch.erf,
        [lin(-5, 5), lin(-1e-3, 1e-3), lin(3.5, 4.5), lin(-1e3, 1e3)],
        2,
    ),  # 4: where the far form clamps
    "erfc": (torch.special.erfc, [lin(-5, 10.1)], 5),
    "gelu": (ref_gelu, [lin(-14, 14)], 6),
    "gelu_tanh": (ref_gelu_tanh, [lin(-40, 40), lin(-12, 0)], 4),
    "sin": (torch.sin, [lin(-10, 10), lin(-1e4, 1e4), lin(-1e9, 1e9)], 2),
    "cos": (torch.cos, [lin(-10, 10), lin(-1e4, 1e4), lin(-1e9, 1e9)], 2),
    "rsqrt": (torch.rsqrt, [positives()], 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ulp_bound(name):
    ref, sweeps, bound = CASES[name]
    f = jit_map(name)
    for x in sweeps:
        err, at, got, want = worst(f(x), ref(x.double()), x)
        assert err <= bound, f"{name}: {err:.2f} ulp at x={at!r}: got {got!r}, want {want!r}"


@pytest.mark.parametrize("name", list(CASES))
def test_edge_cases_match_torch_float64(name):
    """Signed zeros, infinities, NaN, subnormals, overflow/underflow borders: the float64 result rounded."""
    ref, _, bound = CASES[name]
    got, want = jit_map(name)(EDGE), ref(EDGE.double())
    err = ulp_error(got, want)
    assert bool((err <= bound).all()), list(zip(EDGE.tolist(), got.tolist(), want.tolist()))
    zero = want == 0
    assert torch.equal(torch.signbit(got[zero]), torch.signbit(want[zero].float())), "sign of zero"


@pytest.mark.parametrize("lanes", [1, 4, 8, 64])  # 64: the emitter's bodies, four registers (scalef per register)
@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sin", "rsqrt", "erf"])
def test_other_widths_agree(name, lanes):
    x = torch.cat([lin(-20, 20, 1001), positives(1001), EDGE])
    ref = jit_map(name)(x)
    got = jit_map(name, lanes=lanes)(x)
    assert bool((ulp_error(got, ref.double()) <= 2).all())


def test_sin_cos_huge_arguments_take_the_exact_path():
    x = torch.tensor([1e10, -3e20, 3.4e38, 2.0**30 + 128, 1.5, 7e9, 1e12, 2.5] * 2)
    for name, ref in (("sin", torch.sin), ("cos", torch.cos)):
        assert float(ulp_error(jit_map(name)(x), ref(x.double())).max()) <= 1


def test_pow_accuracy_and_negative_bases():
    g = torch.Generator().manual_seed(1)
    x = torch.exp(torch.empty(N).uniform_(-20, math.log(1e4), generator=g)).float()
    y = torch.empty(N).uniform_(-30, 30, generator=g).float()
    f = jit_map("pow", nin=2)
    assert worst(f(x, y), torch.pow(x.double(), y.double()), x)[0] <= 1
    xn = -torch.empty(N).uniform_(0.01, 20, generator=g).float()
    yi = torch.randint(-30, 30, (N,), generator=g).float()
    assert worst(f(xn, yi), torch.pow(xn.double(), yi.double()), xn)[0] <= 1


def test_pow_special_values_match_c99():
    s = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, INF, -INF, NAN, 1e-45, 3e38, -3e38]
    xs, ys = (torch.tensor(v) for v in zip(*itertools.product(s, s)))
    got, want = jit_map("pow", nin=2)(xs, ys), torch.pow(xs.double(), ys.double()).float()
    same = (got == want) & (torch.signbit(got) == torch.signbit(want)) | (got.isnan() & want.isnan())
    assert bool(same.all()), [(a, b, c, d) for a, b, c, d, ok in zip(xs, ys, got, want, same) if not ok]


@pytest.mark.parametrize("lanes", [8, 32])
@pytest.mark.parametrize("name, ref, lo, hi", [("exp", torch.exp, -745, 709), ("log", torch.log, 1e-300, 1e300)])
def test_double_exp_log(name, ref, lo, hi, lanes):
    x = torch.cat([torch.linspace(lo, hi, 100_001, dtype=torch.float64), torch.rand(100_000, dtype=torch.float64) * 4])
    got, want = jit_map(name, lanes=lanes, elem=ir.DoubleType())(x), ref(x)
    ulp = torch.ldexp(torch.ones_like(want), (torch.frexp(want)[1] - 53).clamp(min=-1074))
    assert float(((got - want).abs() / ulp).max()) <= 2


def test_table_lists_every_builder():
    assert set(mathlib.FUNCTIONS) == {
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "tanh",
        "sigmoid",
        "erf",
        "erfc",
        "gelu",
        "gelu_tanh",
        "sin",
        "cos",
        "rsqrt",
        "pow",
    }


DOUBLE_REFS = {
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "erfc": torch.special.erfc,
    "sin": torch.sin,
    "cos": torch.cos,
    "expm1": torch.special.expm1,
    "log1p": torch.log1p,
    "exp2": torch.exp2,
    "log2": torch.log2,
    "rsqrt": torch.rsqrt,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
}


@pytest.mark.parametrize("name", list(DOUBLE_REFS))
def test_double_inputs_are_correct(name):
    x = torch.cat([torch.linspace(-30, 30, 20_001, dtype=torch.float64), EDGE.double()])
    if name in ("log2", "log1p", "rsqrt"):
        x = x.abs()
    got, want = jit_map(name, lanes=8, elem=ir.DoubleType())(x), DOUBLE_REFS[name](x)
    atol = 1e-15 if name.startswith("gelu") else 1e-300  # torch's 1 + tanh / 1 + erf cancels in the tail
    torch.testing.assert_close(got, want, rtol=1e-14, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(set(mathlib.FUNCTIONS) - {"sin", "cos"}))
def test_no_libm_calls(name):
    """The float32 builders are straight-line code: the optimised IR declares only LLVM intrinsics."""
    from irc.targets.cpu.runtime import jit
    from tests.cpu.kernels import map_kernel

    m = ir.Module()
    map_kernel(m, "k", mathlib.FUNCTIONS[name], 2 if name == "pow" else 1)
    ref = jit.engine().optimize(str(m))
    external = [f.name for f in ref.functions if f.is_declaration and not f.name.startswith("llvm.")]
    assert external == []
