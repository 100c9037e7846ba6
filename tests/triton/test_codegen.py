"""The Triton target's generated kernels against eager, under the interpreter without a GPU: the CPU
target's case lists (elementwise families, reductions, fused kernels) on odd sizes, non-contiguous,
broadcast and expanded inputs, every dtype, dynamic sizes, guarded reads, several outputs per kernel,
and both reduction shapes (whole rows in registers, and rows looped in blocks)."""

import pytest
import torch
import torch.nn.functional as F

from irc.targets.triton import source
from tests.cpu.test_codegen import BINARY, FUSED, REDUCTIONS, UNARY
from tests.triton.programs import check

G = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=G).to(dtype)


@pytest.mark.parametrize("name", UNARY)
def test_unary_float(name):
    check(UNARY[name], randn(5, 17))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shape", [(1,), (5, 17)])
def test_binary_float(name, shape):
    check(BINARY[name], randn(*shape), randn(*shape))


def test_nan_and_inf_propagate():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0] * 3)
    check(lambda t: (torch.relu(t), torch.maximum(t, t.flip(0)), t.exp(), t.tanh(), t.sigmoid()), x)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_ops(dtype):
    shape = (5, 33)
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


def test_small_integer_and_bool_ops():
    a, b = torch.rand(4, 33, generator=G) > 0.5, torch.rand(4, 33, generator=G) > 0.3
    check(lambda x, y: (x & ~y, x | y, x ^ y, x.any(-1), (x | y).all(-1), x.float() * 2, (x == y)), a, b)
    u = torch.arange(0, 250, 7, dtype=torch.uint8)
    check(lambda t: (t + 300, t // 3, t.max()), u)
    check(lambda t: (t * 3).sum(-1), torch.randint(-100, 100, (3, 17), generator=G, dtype=torch.int8))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_float_dtypes(dtype):
    x, y = randn(3, 33, dtype=dtype), randn(33, dtype=dtype)
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
        (torch.float64, torch.float16),
    ],
)
def test_casts(src, dst):
    x = (randn(5, 17) * 50).to(src) if src != torch.bool else torch.rand(5, 17, generator=G) > 0.5
    check(lambda t: t.to(dst) * 1 if dst != torch.bool else t.to(dst), x)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("shape", [(1, 1), (2, 17), (2, 3, 65)])
def test_reductions(name, shape):
    check(REDUCTIONS[name], randn(*shape))


def test_reductions_keepdim_and_argmax_ties():
    check(lambda x: (x.sum(1, keepdim=True), x.amax((0, 2), keepdim=True), x.mean(-1, keepdim=True)), randn(3, 5, 7))
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0] * 9, [0.0, float("nan"), 5.0, float("nan")] * 9])
    check(lambda t: (t.argmax(-1), t.argmin(-1)), x)


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("n", [1, 17, 100])
def test_fused(name, n):
    check(FUSED[name], randn(6, n), randn(n), randn(n))


def test_looped_rows(monkeypatch):
    """Rows wider than SINGLE_MAX loop over RBLOCK chunks, one loop per reduction depth."""
    monkeypatch.setattr(source, "SINGLE_MAX", 8)
    x = randn(5, 37)
    x[1, 3] = float("nan")
    r = check(lambda t: (torch.softmax(t, -1), F.layer_norm(t, (37,)), t.argmax(-1), t.amin(0), t.sum()), x)
    assert r.kernels >= 1


def test_non_contiguous_broadcast_and_expanded_inputs():
    check(lambda x: (x * 2).exp() + x.sum(-1, keepdim=True), randn(9, 34)[:, ::2])
    check(lambda x: torch.softmax(x, -1), randn(17, 9).t())
    check(lambda x: x.permute(2, 0, 1).sin() * 2, randn(3, 5, 17))
    check(lambda x, y: x * y + 1, randn(5, 1, 17), randn(3, 1))
    check(lambda x: x.cos() + 1, randn(1, 17).expand(6, 17))
    check(lambda x, y: torch.where(x > 0, x, y), randn(4, 33), torch.tensor(2.0))


def test_guarded_reads_pad_cat_gather():
    check(lambda x: F.pad(x, (1, 2, 0, 1), value=3.0), randn(4, 17))
    check(lambda x, y: torch.cat([x, y], 1) * 2, randn(4, 17), randn(4, 5))
    check(lambda x, i: torch.gather(x, 1, i), randn(4, 17), torch.randint(0, 17, (4, 20), generator=G))
    check(lambda w, i: F.embedding(i, w).sum(1), randn(10, 8), torch.randint(0, 10, (5, 3), generator=G))


def test_zero_size_and_scalars():
    check(lambda x: x * 2, randn(0, 5))
    check(lambda x: x * 2 + 1, torch.tensor(3.0))
    check(lambda x: x.sum() * 2, randn(33))


@pytest.mark.parametrize(
    "fn", [lambda x, y: (x * y).relu(), lambda x, y: torch.softmax(x, -1) * y, lambda x, y: (x.sum(-1), x.sum(0) + y)]
)
def test_dynamic_sizes(fn):
    sizes = [(3, 17), (1, 16), (5, 1)]
    make = [(randn(*s), randn(s[-1])) for s in [(7, 40)] + sizes]
    check(fn, *make[0], dynamic=True, more=make[1:])


def test_every_scalar_op_of_the_reference_has_a_triton_emitter():
    from irc.dialects.semantics import SCALAR
    from irc.targets.triton.ops import OPS

    assert [op.__name__ for op in SCALAR if op not in OPS] == []


def test_integer_powers_are_exact():
    x, y = torch.randint(-5, 6, (4, 9), generator=G), torch.randint(0, 7, (4, 9), generator=G)
    check(lambda a, b: (a**b, a**3, torch.pow(a.int(), b.int())), x, y)
