"""The CPU target's generated code against eager: op families and fused kernels, on contiguous,
non-contiguous, broadcast and expanded inputs, sizes around the vector width, every dtype, dynamic
sizes. The runtime's side (entry checks, reported fallbacks, the cache across processes, parallel launches) is
test_codegen_runtime.py."""

import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from irc import report
from tests.conftest import compile_irc
from tests.cpu.programs import check

SIZES = [(1,), (15,), (16,), (17,), (33,), (3, 1), (5, 17), (2, 3, 33), (7, 16)]
G = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=G).to(dtype)


def positive(*shape):
    return torch.rand(*shape, generator=G) + 0.1


# -- elementwise families --------------------------------------------------------------------------

UNARY = {
    "exp": torch.exp,
    "log": lambda x: torch.log(x.abs() + 0.1),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "sin": torch.sin,
    "cos": torch.cos,
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
    "sqrt": lambda x: x.abs().sqrt(),
    "abs_neg": lambda x: -x.abs(),
    "rounding": lambda x: (x * 3).floor() + (x * 3).ceil() + (x * 3).round(),
    "expm1_log1p": lambda x: torch.expm1(x) + torch.log1p(x.abs()),
    "gelu": F.gelu,
    "silu": F.silu,
    "pow": lambda x: torch.pow(x.abs() + 0.5, 2.5),
    "atan_libm": torch.atan,
    "sign": torch.sign,
}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(33,), (5, 17)])
def test_unary_float(name, shape):
    check(UNARY[name], randn(*shape))


BINARY = {
    "arith": lambda x, y: (x + y) * (x - y) / (y.abs() + 1),
    "minmax": lambda x, y: torch.maximum(x, y) - torch.minimum(x, y),
    "compare_where": lambda x, y: torch.where(x > y, x, y * 2),
    "fmod": lambda x, y: torch.fmod(x, y.abs() + 0.5),
    "atan2": torch.atan2,
    "hypot_ish": lambda x, y: (x * x + y * y).sqrt(),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shape", SIZES)
def test_binary_float(name, shape):
    check(BINARY[name], randn(*shape), randn(*shape))


def test_nan_and_inf_propagate():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0] * 3)
    check(lambda t: (torch.relu(t), torch.maximum(t, t.flip(0)), t.exp(), t.tanh(), t.sigmoid()), x)


@pytest.mark.parametrize("n", [1, 2, 17, 1024])
def test_max_and_min_reductions_keep_a_nan_wherever_it_stands(n):
    """reduce.combine's max/min, both forms: a vector accumulator's compare and selects (n = 1, 17, 1024) and a
    scalar one's llvm.maximum/minimum (n = 2: the rows, the columns and the max pool's windows): a NaN in the first,
    middle or last lane of a row (a vector tail at 17), or in the column reduced, gives NaN; inf and -inf rows as
    eager. A -0 beside a +0 is left out: eager's amax and max pools keep the first, its max() the last."""
    x = randn(6, n)
    x[0, 0], x[1, n // 2], x[2, n - 1] = float("nan"), float("nan"), float("nan")
    x[3], x[4, n - 1] = float("-inf"), float("inf")
    pool = lambda t: F.adaptive_max_pool2d(t[:, None, None], 1)  # noqa: E731
    check(lambda t: (t.amax(-1), t.amin(-1), t.amax(0), t.amin(0), torch.softmax(t, -1), pool(t)), x)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("shape", [(1,), (17,), (5, 33)])
def test_integer_ops(dtype, shape):
    x = torch.randint(-100, 100, shape, generator=G, dtype=dtype)
    y = torch.randint(1, 9, shape, generator=G, dtype=dtype) * torch.where(
        torch.rand(shape, generator=G) > 0.5, 1, -1
    ).to(dtype)
    check(
        lambda a, b: (
            a // b,
            a % b,
            torch.div(a, b, rounding_mode="trunc"),
            a * 3 - b,
            a & b,
            a | b,
            a ^ b,
            torch.maximum(a, b),
            a.abs(),
            a < b,
            a << 2,
            a >> 1,
        ),
        x,
        y,
    )


_DIVIDE = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, sys.argv[1])
    from tests.cpu.programs import build
    cases = torch.load(sys.argv[2])
    program, _ = build(lambda a, b: (a // b, a % b), *cases[0])
    torch.save([program(list(args)) for args in cases], sys.argv[3])
""")


def test_integer_division_by_zero_does_not_trap(tmp_path):
    """A zero divisor (eager raises) and INT_MIN // -1 (eager dies of SIGFPE) give unspecified values, never a trap: the
    program runs in a child process, which must exit normally; every other element of // and % equals eager's."""
    int_min = -(2**31)
    x = torch.arange(-8, 9, dtype=torch.int32)
    d = torch.tensor([0, 3, -2] * 5 + [0, 1], dtype=torch.int32)  # a zero divisor every third element
    m = torch.where(torch.arange(17) % 2 == 0, int_min, x)
    cases = [(x, d), (m, -torch.ones(17, dtype=torch.int32))]
    torch.save(cases, tmp_path / "in.pt")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, IRC_CACHE_DIR=str(tmp_path / "cache"))  # compiled here, not a cached kernel of another build
    p = subprocess.run(
        [sys.executable, "-c", _DIVIDE, root, str(tmp_path / "in.pt"), str(tmp_path / "out.pt")],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    died = f"signal {signal.Signals(-p.returncode).name}" if p.returncode < 0 else f"exit {p.returncode}"
    assert p.returncode == 0, f"the compiled division died ({died}): {p.stderr[-2000:]}"
    for (a, b), got in zip(cases, torch.load(tmp_path / "out.pt"), strict=True):
        defined = (b != 0) & ~((a == int_min) & (b == -1))
        safe = torch.where(defined, b, 1)
        for g, w in zip(got, (a // safe, a % safe), strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape)
            assert torch.equal(g[defined], w[defined]), (g, w)


@pytest.mark.parametrize("shape", [(17,), (4, 33)])
def test_bool_ops(shape):
    a, b = torch.rand(shape, generator=G) > 0.5, torch.rand(shape, generator=G) > 0.3
    check(lambda x, y: (x & ~y, x | y, x ^ y, x.any(-1), (x | y).all(-1), x.float() * 2, (x == y)), a, b)


# -- dtypes: compute in float32 for the half types, convert on load and store ------------------------

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16,), (17,), (3, 33)])
def test_float_dtypes(dtype, shape):
    x, y = randn(*shape, dtype=dtype), randn(shape[-1], dtype=dtype)
    check(lambda a, b: ((a * 2 + b).relu() * a.sigmoid(), a.sum(-1), torch.softmax(a, -1), a.amax(-1)), x, y)


@pytest.mark.parametrize(
    "src,dst",
    [
        (torch.float32, torch.float16),
        (torch.float32, torch.bfloat16),
        (torch.float16, torch.float32),
        (torch.float32, torch.int32),
        (torch.int64, torch.float32),
        (torch.bool, torch.float32),
        (torch.float32, torch.bool),
        (torch.int32, torch.int64),
        (torch.float64, torch.float16),
    ],
)
def test_casts(src, dst):
    x = (randn(5, 17) * 50).to(src) if src != torch.bool else torch.rand(5, 17, generator=G) > 0.5
    check(lambda t: t.to(dst) * 1 if dst != torch.bool else t.to(dst), x)


def test_a_value_cast_to_bf16_is_stored_with_the_bits_the_cast_rounded_to():
    """(x * 3).to(bf16) rounds once, in the cast: the store of the cast's value takes its bits rather than rounding
    them again (an integer sequence per vector that LLVM does not fold). NaN and a tie round as eager does."""
    x = randn(5, 37) * 3
    x[0, :3] = torch.tensor([float("nan"), 1.0 + 2.0**-8, -(1.0 + 3 * 2.0**-8)])  # a NaN and two ties
    program = check(lambda t: (t * 3).to(torch.bfloat16), x)
    torch.testing.assert_close(program([x])[0], (x * 3).to(torch.bfloat16), rtol=0, atol=0, equal_nan=True)
    lines = program.compiled.llvm_ir.splitlines()
    stores = [
        ln for ln in lines if not ln.startswith("declare") and re.search(r"store( <\d+ x i16>| i16 |\.v\d+i16)", ln)
    ]
    roundings = [ln for ln in lines if "i32 32767" in ln]  # the round-to-nearest-even bias, once per rounding
    assert stores and len(roundings) == len(stores), (stores, roundings)


# -- reductions and fused kernels ---------------------------------------------------------------------

REDUCTIONS = {
    "sum_last": lambda x: x.sum(-1),
    "sum_first": lambda x: x.sum(0),
    "amax_amin": lambda x: (x.amax(-1), x.amin(0)),
    "mean_all": lambda x: x.mean(),
    "prod": lambda x: (x * 0.1 + 1).prod(-1),
    "argmax": lambda x: (x.argmax(-1), x.argmin(0)),
    "var_std": lambda x: (x.var(-1), x.std(0)),
    "max_dim": lambda x: x.max(-1),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("shape", [(1, 1), (3, 15), (4, 16), (2, 17), (33, 33), (2, 3, 65)])
def test_reductions(name, shape):
    check(REDUCTIONS[name], randn(*shape))


def test_argmax_ties_and_nan_take_the_first():
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0] * 9, [0.0, float("nan"), 5.0, float("nan")] * 9])
    check(lambda t: (t.argmax(-1), t.argmin(-1)), x)


FUSED = {
    "softmax": lambda x, w, b: torch.softmax(x, -1),
    "log_softmax": lambda x, w, b: F.log_softmax(x, -1),
    "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
    "softmax_layer_norm": lambda x, w, b: F.layer_norm(torch.softmax(x, -1), (x.shape[-1],)),
    "bias_gelu": lambda x, w, b: F.gelu(x + b) * w,
    "chain": lambda x, w, b: ((x * 2 + 1).relu() * x.sigmoid()).tanh(),
    "rms_norm": lambda x, w, b: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
}


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 100])
def test_fused(name, n):
    check(FUSED[name], randn(6, n), randn(n), randn(n))


# -- layouts: non-contiguous, broadcast (stride 0), strided, data-dependent reads ---------------------


def test_non_contiguous_inputs():
    wide = randn(9, 34)
    check(lambda x: (x * 2).exp() + x.sum(-1, keepdim=True), wide[:, ::2])
    check(lambda x: torch.softmax(x, -1), randn(17, 9).t())
    check(lambda x: x.permute(2, 0, 1).sin() * 2, randn(3, 5, 17))


def test_broadcast_and_expanded_inputs():
    check(lambda x, y: x * y + 1, randn(5, 1, 17), randn(3, 1))
    check(lambda x: x.cos() + 1, randn(1, 17).expand(6, 17))
    check(lambda x, y: torch.where(x > 0, x, y), randn(4, 33), torch.tensor(2.0))


def test_guarded_reads_pad_cat_gather():
    check(lambda x: F.pad(x, (1, 2, 0, 1), value=3.0), randn(4, 17))
    check(lambda x, y: torch.cat([x, y], 1) * 2, randn(4, 17), randn(4, 5))
    check(lambda x, i: torch.gather(x, 1, i), randn(4, 17), torch.randint(0, 17, (4, 20), generator=G))
    check(lambda x, i: x[i] * 2, randn(40, 17), torch.randint(0, 40, (33,), generator=G))
    check(lambda w, i: F.embedding(i, w).sum(1), randn(10, 8), torch.randint(0, 10, (5, 3), generator=G))


@pytest.mark.parametrize("inner", [256, 17, 1])
def test_cat_and_pad_read_their_pieces_by_masked_loads_not_gathers(inner):
    """A guarded read whose index moves one element per lane (each piece of a cat or stack, a padded row) is one
    masked vector load of the lanes inside the buffer: clamping each lane's index made it a gather, and stack's
    kernel in nn.MultiheadAttention's backward ran 5x slower than eager's stack. Odd widths leave vector tails."""
    pieces = [randn(6, 5, inner) for _ in range(3)]
    program = check(
        lambda a, b, c: torch.stack([a, b * 0.5, c], 2), *pieces, cache=False
    )  # its optimized IR is read below
    check(lambda a, b: torch.cat([a, b.neg()], -1), *pieces[:2])
    check(lambda a: F.pad(a, (3, 2), value=-1.0), pieces[0])
    check(
        lambda a, b: torch.cat([a, b.neg()], -1),
        randn(6, 5, inner + 2),
        randn(6, 5, 7),
        dynamic=True,
        more=[(randn(2, 3, inner + 21), randn(2, 3, 4))],
    )
    if inner >= 16:
        text = program.compiled.lib.optimized_ir
        assert "llvm.masked.load" in text and "llvm.masked.gather" not in text


@pytest.mark.parametrize("channels", [64, 19])
def test_a_window_whose_guard_is_the_same_for_every_lane_is_read_by_plain_loads(channels):
    """An NHWC pool reads each window position as whole vectors of channels; whether the position lies in the
    padded input depends on the row and column only, so one test branches around a plain load (masked loads of
    those windows ran 2-3x slower than eager's pool). The channels' vector tail (19) keeps its masked load. The
    numbers are eager's at the padded borders, with NaNs and equal maxima, for max and average pools."""
    x = randn(2, 28, 27, channels)  # 9 x 11 has no masked load to remove: LLVM unrolls its few columns
    x[0, 0, 0, :3] = float("nan")
    x[1, 4:7, 4:7] = 0.0
    max_pool = lambda t: F.max_pool2d(t.permute(0, 3, 1, 2), 3, 2, 1).permute(0, 2, 3, 1)  # noqa: E731
    avg_pool = lambda t: F.avg_pool2d(t.permute(0, 3, 1, 2), 3, 2, 1).permute(0, 2, 3, 1)  # noqa: E731
    program = check(max_pool, x, cache=False)  # its optimized IR is read below
    check(avg_pool, x)
    text = program.compiled.lib.optimized_ir
    if channels % 16 == 0:
        assert "llvm.masked.load" not in text
    else:
        assert "llvm.masked.load" in text  # the lanes past the last whole vector of channels


def test_zero_size_and_scalars():
    check(lambda x: x * 2, randn(0, 5))
    check(lambda x: x * 2 + 1, torch.tensor(3.0))
    check(lambda x: x.sum() * 2, randn(33))


def test_externs_with_epilogues():
    p = check(lambda x, w, b: F.linear(x, w, b).relu(), randn(16, 32), randn(24, 32), randn(24))
    assert not p.compiled.fallbacks
    check(lambda a, b: torch.bmm(a, b).tanh(), randn(3, 8, 16), randn(3, 16, 5))
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1).relu(), randn(2, 3, 9, 9), randn(4, 3, 3, 3), randn(4))


# -- dynamic sizes: one program for every size ----------------------------------------------------------


@pytest.mark.parametrize(
    "fn", [lambda x, y: (x * y).relu(), lambda x, y: torch.softmax(x, -1) * y, lambda x, y: (x.sum(-1), x.sum(0) + y)]
)
def test_dynamic_sizes(fn):
    sizes = [(3, 17), (1, 16), (4, 15), (2, 33), (5, 1)]
    make = [(randn(*s), randn(s[-1])) for s in [(7, 40)] + sizes]
    check(fn, *make[0], dynamic=True, more=make[1:])


def test_dynamic_through_the_backend():
    start = report.mark()
    f = compile_irc(lambda x: torch.softmax(x * 2, -1).sum(-1), dynamic=True)
    for n in (15, 16, 17, 33, 100):
        x = randn(3, n)
        torch.testing.assert_close(f(x), torch.softmax(x * 2, -1).sum(-1))
    graphs = report.reports_since(start).graphs
    assert len(graphs) == 1 and graphs[0].target == "cpu" and graphs[0].kernels >= 1
    assert not [w for w, _ in graphs[0].target_fallbacks if w.startswith("kernel")]


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16])
def test_small_integer_dtypes(dtype):
    x = torch.randint(0, 100, (5, 33), generator=G).to(dtype)
    check(lambda t: (t * 3 + 1, t.amax(-1), t // 3, t > 50), x)
