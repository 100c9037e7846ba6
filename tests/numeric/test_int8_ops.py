"""PT2E's quantize / dequantize ops (torch.ops.quantized_decomposed) compile natively, bit for bit as eager:
per tensor (a Python float scale and the tensor-scale forms) and per channel (every axis, with and without zero
points), uint8 / int8 / int16 results, odd sizes, non-contiguous inputs, round-half-even ties and clamping. The cpu
target runs them as generated kernels (expand-quant), the reference target as their meaning (dialects/semantics)."""

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # registers torch.ops.quantized_decomposed

import irc
from tests.conftest import compile_irc

qd = torch.ops.quantized_decomposed
TARGETS = ["cpu", "reference"]
SCALE = 0.0371  # no power of two: x * (1 / scale) rounds


def ties(shape, scale=SCALE, seed=0):
    """Values spread over and beyond the uint8 range, a quarter of them on exact halves of `scale` (round's ties)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 200 * scale
    halves = (torch.randint(-300, 300, shape, generator=g) + 0.5) * scale
    return torch.where(torch.rand(shape, generator=g) < 0.25, halves, x)


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got, want), f"{(got.double() - want.double()).abs().max()} at most"


def native(fn, *args, target):
    rep = irc.explain(fn, *args, options={"strict": True, "target": target})
    assert rep.native and not rep.fallbacks, str(rep)
    assert not [f for g in rep.graphs for f in g.target_fallbacks], str(rep)  # no kernel on the reference evaluator


def per_tensor(x, s, z):
    u8 = qd.quantize_per_tensor(x, SCALE, 139, 0, 255, torch.uint8)
    i8 = qd.quantize_per_tensor(x, SCALE, -3, -128, 127, torch.int8)
    narrow = qd.quantize_per_tensor(x, SCALE, 5, 0, 127, torch.uint8)  # a range short of the dtype's
    i16 = qd.quantize_per_tensor(x * 100, SCALE, 7, -32768, 32767, torch.int16)
    by_tensor = qd.quantize_per_tensor.tensor(x, s, z, -128, 127, torch.int8)
    back = qd.dequantize_per_tensor(u8, SCALE, 139, 0, 255, torch.uint8)
    back_t = qd.dequantize_per_tensor.tensor(by_tensor, s, z, -128, 127, torch.int8)
    return (
        u8,
        i8,
        narrow,
        i16,
        by_tensor,
        back,
        back_t,
        qd.dequantize_per_tensor(i16, SCALE, 7, -32768, 32767, torch.int16),
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_per_tensor_forms_match_eager_bit_for_bit(target, layout):
    x = ties((13, 7, 5))
    x = x.transpose(0, 2) if layout == "transposed" else x
    s, z = torch.tensor(0.0213), torch.tensor(4)
    want = per_tensor(x, s, z)
    got = compile_irc(per_tensor, target=target)(x, s, z)
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)
    native(per_tensor, x, s, z, target=target)


def per_channel(x, scales, zps, q, axis):
    quantized = qd.quantize_per_channel(x, scales, zps, axis, -128, 127, torch.int8)
    back = qd.dequantize_per_channel(q, scales, zps, axis, -128, 127, torch.int8)
    symmetric = qd.dequantize_per_channel(q, scales, None, axis, -128, 127, torch.int8)
    return quantized, back, symmetric


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_per_channel_forms_match_eager_bit_for_bit(target, axis):
    x = ties((5, 9, 11)).transpose(1, 2)  # non-contiguous, channels of odd counts along every axis
    n = x.shape[axis]
    g = torch.Generator().manual_seed(1)
    scales = torch.rand(n, generator=g) * 0.05 + 0.01
    zps = torch.randint(-5, 5, (n,), generator=g)
    q = torch.randint(-128, 128, x.shape, dtype=torch.int8, generator=g)
    fn = lambda x, s, z, q: per_channel(x, s, z, q, axis)
    want = fn(x, scales, zps, q)
    got = compile_irc(fn, target=target)(x, scales, zps, q)
    for g_, w in zip(got, want, strict=True):
        assert_same(g_, w)
    native(fn, x, scales, zps, q, target=target)


CHOOSE_INPUTS = {  # name -> input: the range's ends, the minimum's clamp to 0, a zero range's eps, a 3-d tensor
    "ties": lambda: ties((7, 11)).t(),
    "positive": lambda: ties((5, 9)).abs() + 3.0,
    "negative": lambda: -ties((5, 9)).abs() - 0.25,
    "zeros": lambda: torch.zeros(4, 6),
    "tiny": lambda: ties((4, 6)) * 1e-9,
    "tokens": lambda: ties((2, 16, 24), seed=3),
    "one-sequence": lambda: ties((1, 16, 24), seed=4),  # a unit dim: one nest of both reductions and the quantize
    "large": lambda: ties((1, 257, 300), seed=5),  # 77,100 elements: the rows reduced first (lower_quant.py)
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", CHOOSE_INPUTS)
def test_choose_qparams_matches_eager_bit_for_bit(target, kind):
    """Dynamic quantization's parameters: on the cpu target generated kernels (the minimum and maximum reductions and
    determine_qparams' float32 arithmetic: lower_quant.py), no library call; torch's own function on the reference."""

    def fn(x):
        s, z = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
        s8, z8 = qd.choose_qparams.tensor(x.relu(), -128, 127, 1e-5, torch.int8)
        return s, z, s8, z8, qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8)

    x = CHOOSE_INPUTS[kind]()
    for got, want in zip(compile_irc(fn, target=target)(x), fn(x), strict=True):
        assert_same(got, want)
    native(fn, x, target=target)
    if target == "cpu":
        rep = irc.explain(fn, x, options={"strict": True, "target": target})
        assert not [e for g in rep.graphs for e in g.externs], str(rep)


def test_dequantize_quantize_round_trip_of_the_same_parameters_is_the_integers():
    """fuse-quant's q(reshape(dq(x))) -> reshape(x) is exact: eager gives back every uint8 value too, at any scale."""
    q = torch.arange(256, dtype=torch.uint8).reshape(16, 16)
    params = [(0.015334107913076878, 0), (1e-4, 255), (3.7, 128), (1.0 / 3.0, 17), (1e-6, 1), (123.0, 200)]

    def fn(q):
        out = []
        for scale, zp in params:
            d = qd.dequantize_per_tensor(q, scale, zp, 0, 255, torch.uint8)
            out.append(qd.quantize_per_tensor(d.reshape(256), scale, zp, 0, 255, torch.uint8))
        return out

    for got, want in zip(compile_irc(fn)(q), fn(q), strict=True):
        assert_same(got, want)
        assert_same(got, q.reshape(256))


def test_an_unsupported_form_runs_eagerly_with_the_reason():
    """A dequantize to bfloat16 (no tn form: eager rounds twice in bf16) is an eager call in an otherwise compiled
    graph, reported, with eager's numbers."""
    q = torch.randint(0, 256, (4, 6), dtype=torch.uint8)

    def fn(q):
        return qd.dequantize_per_tensor(q, SCALE, 3, 0, 255, torch.uint8, out_dtype=torch.bfloat16) * 2

    assert_same(torch.compile(fn, backend=irc.backend)(q), fn(q))
    rep = irc.explain(fn, q)
    assert [t for t, _ in rep.fallbacks] == ["quantized_decomposed::dequantize_per_tensor.default"], str(rep)
