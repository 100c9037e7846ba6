"""fuse-quant's int8 products against eager's graph (dq -> product -> relu? -> q, PT2E's pattern): oneDNN's
qconv / qlinear compute the integer sums exactly and round once, eager rounds the float chain, so a quantized
output may differ from eager's by one step (never more, and rarely at all); a float output by the rounding of a
float32 sum. What oneDNN cannot take (weight zero points, int8 activations, a range short of the dtype's) gives
eager's numbers exactly."""

import math

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # registers torch.ops.quantized_decomposed
import torch.nn.functional as F

import irc
from irc import report
from irc.dialects.semantics import quant
from tests.conftest import compile_irc

qd = torch.ops.quantized_decomposed
XS, XZ, OS, OZ = 0.031, 131, 0.047, 0


def weights(out_ch, *shape, zero_points=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(out_ch, *shape, generator=g)
    scales = w.flatten(1).abs().amax(1) / 127
    zps = torch.randint(-4, 5, (out_ch,), generator=g) if zero_points else torch.zeros(out_ch, dtype=torch.int64)
    return (
        qd.quantize_per_channel(w, scales, zps, 0, -128, 127, torch.int8),
        scales,
        zps,
        torch.randn(out_ch, generator=g),
    )


def conv_q(x, w, ws, wz, b, relu=True, out=(OS, OZ, 0, 255, torch.uint8)):
    y = F.conv2d(
        qd.dequantize_per_tensor(x, XS, XZ, 0, 255, torch.uint8),
        qd.dequantize_per_channel(w, ws, wz, 0, -128, 127, torch.int8),
        b,
        padding=1,
    )
    y = torch.relu(y) if relu else y
    return qd.quantize_per_tensor(y, *out) if out else y


def linear_q(x, w, ws, wz, b, out=(OS, OZ, 0, 255, torch.uint8)):
    y = F.linear(
        qd.dequantize_per_tensor(x, XS, XZ, 0, 255, torch.uint8),
        qd.dequantize_per_channel(w, ws, wz, 0, -128, 127, torch.int8),
        b,
    )
    return qd.quantize_per_tensor(torch.relu(y), *out) if out else y


def activations(*shape, seed=1):
    return torch.randint(0, 256, shape, dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


# fuse-quant fires only where oneDNN sums int8 products exactly (VNNI, AMX: Rules.int8_products); elsewhere the
# graph's float chain compiles as any float graph, so the fused forms' structure is checked only where they are made
FUSED = quant.onednn_exact()


def extern_paths(fn, *args) -> dict[str, str]:
    """The int8 products' extern paths; where fuse-quant does not fire, after checking that none was made."""
    rep = irc.explain(fn, *args, options={"strict": True})
    assert rep.native and not [f for g in rep.graphs for f in g.target_fallbacks], str(rep)
    paths = {p: path for g in rep.graphs for p, path in g.extern_paths.items()}
    if not FUSED:
        assert not [p for p in paths if p.startswith("tn.q")], paths
    return paths


def within_one_step(got, want):
    assert got.dtype == want.dtype
    diff = (got.int() - want.int()).abs()
    assert diff.max() <= 1 and (diff > 0).float().mean() < 0.02, f"max {diff.max()}, {(diff > 0).float().mean():.3%}"


@pytest.mark.parametrize("relu", [True, False])
def test_conv_quantized_output_within_one_step(relu):
    x, w = activations(2, 16, 9, 7), weights(24, 16, 3, 3)
    fn = lambda x: conv_q(x, *w, relu=relu)
    within_one_step(compile_irc(fn)(x), fn(x))
    paths = extern_paths(fn, x)
    assert not FUSED or [p for p in paths if p.startswith("tn.qconv")] == [
        f"tn.qconv 2x9x7x16, 24x16x3x3 NHWC -> uint8, post-op {'relu' if relu else 'none'}"
    ], paths


def test_conv_and_linear_float_outputs_match_eager_to_float32_rounding():
    x, w, xl, wl = activations(3, 8, 6, 6), weights(5, 8, 3, 3), activations(7, 40), weights(11, 40)

    def fn(x, xl):
        return conv_q(x, *w, relu=False, out=None), linear_q(xl, *wl, out=None)

    got, want = compile_irc(fn)(x, xl), fn(x, xl)
    for g, e in zip(got, want, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-4)
    paths = extern_paths(fn, x, xl)
    assert not FUSED or sorted(p.split()[0] for p in paths) == ["tn.qconv", "tn.qlinear"], paths


def test_linear_quantized_output_within_one_step():
    x, w = activations(13, 72), weights(33, 72)
    fn = lambda x: linear_q(x, *w)
    within_one_step(compile_irc(fn)(x), fn(x))
    paths = extern_paths(fn, x)
    assert not FUSED or "tn.qlinear 13x72, 33x72 -> uint8, post-op relu" in paths, paths


def test_what_onednn_cannot_take_gives_eagers_numbers_exactly():
    """Weights with nonzero zero points (oneDNN would ignore them: the extern takes the graph's float chain), int8
    activations and a short output range (left unfused, computed as eager's decomposition; the float output to
    float32 rounding)."""
    x, x8 = activations(2, 8, 6, 6), torch.randint(-128, 128, (2, 8, 6, 6), dtype=torch.int8)
    w_zp, w = weights(6, 8, 3, 3, zero_points=True), weights(6, 8, 3, 3)

    def fn(x, x8):
        a = conv_q(x, *w_zp)
        d8 = qd.dequantize_per_tensor(x8, XS, 3, -128, 127, torch.int8)
        b = F.conv2d(d8, qd.dequantize_per_channel(w[0], w[1], w[2], 0, -128, 127, torch.int8), w[3], padding=1)
        c = conv_q(x, *w, out=(OS, OZ, 0, 127, torch.uint8))
        return a, b, c

    got, want = compile_irc(fn)(x, x8), fn(x, x8)
    assert torch.equal(got[0], want[0])
    # a float32 convolution of the dequantized int8 activations: its layout (select-layout) may round it otherwise
    torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-4)
    within_one_step(got[2], want[2])  # the int8 product's float result, quantized by the graph's own short range


def test_residual_sum_within_one_step():
    """q(relu(conv(dq(x), dq(w)) + dq(identity))): one convolution with oneDNN's sum post-op; the identity, read
    again after it, keeps its values (oneDNN sums into a copy)."""
    x, ident, w = activations(2, 8, 7, 5), activations(2, 8, 7, 5, seed=3), weights(8, 8, 3, 3)

    def fn(x, ident):
        y = F.conv2d(
            qd.dequantize_per_tensor(x, XS, XZ, 0, 255, torch.uint8),
            qd.dequantize_per_channel(w[0], w[1], w[2], 0, -128, 127, torch.int8),
            w[3],
            padding=1,
        )
        y = torch.relu(y + qd.dequantize_per_tensor(ident, 0.02, 3, 0, 255, torch.uint8))
        return qd.quantize_per_tensor(y, OS, OZ, 0, 255, torch.uint8), ident * 2

    got, want = compile_irc(fn)(x, ident), fn(x, ident)
    within_one_step(got[0], want[0])
    assert torch.equal(got[1], want[1])
    paths = extern_paths(fn, x, ident)
    assert not FUSED or "tn.qconv 2x7x5x8, 8x8x3x3 NHWC, sum -> uint8, post-op relu" in paths, paths


@pytest.mark.parametrize("shape", [(9, 40), (1, 9, 40), (1, 300, 256)], ids=["2d", "unit-dim", "split-range"])
def test_dynamic_linear_matches_eager(shape):
    """Dynamic quantization (X86InductorQuantizer(is_dynamic=True)'s graph): choose_qparams at run time, the
    activation quantized by its result, one oneDNN int8 linear with those parameters as tensors; float32 out. A
    (1, tokens, features) activation, as a transformer's: its range is one nest of both reductions (with the
    quantize, below simplify-tensor's split of a large range into rows first: split-range)."""
    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(*shape, generator=g), weights(12, shape[-1])

    def fn(x):
        s, z = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
        q = qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8)
        d = qd.dequantize_per_tensor.tensor(q, s, z, 0, 255, torch.uint8)
        return torch.relu(F.linear(d, qd.dequantize_per_channel(w[0], w[1], w[2], 0, -128, 127, torch.int8), w[3]))

    torch.testing.assert_close(compile_irc(fn)(x), fn(x), rtol=1e-5, atol=1e-4)
    paths = extern_paths(fn, x)
    rows = math.prod(shape[:-1])
    want = {f"tn.qlinear_dynamic {rows}x{shape[-1]}, 12x{shape[-1]} -> float32, post-op none": "onednn"}
    assert not FUSED or paths == want, paths


class SiblingLinears(torch.nn.Module):
    """Dynamically quantized linear layers of one activation, as a transformer's query, key and value are (their
    int8 weights buffers, as PT2E's converted graph holds them), of output widths `widths`."""

    def __init__(self, features: int, widths: list[int]):
        super().__init__()
        self.n = len(widths)
        for i, width in enumerate(widths):
            for name, t in zip(("w", "ws", "wz", "b"), weights(width, features, seed=i)):
                self.register_buffer(f"{name}{i}", t)

    def forward(self, x):
        s, z = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
        d = qd.dequantize_per_tensor.tensor(
            qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8), s, z, 0, 255, torch.uint8
        )
        out = []
        for i in range(self.n):
            w, ws, wz, b = (getattr(self, f"{name}{i}") for name in ("w", "ws", "wz", "b"))
            out.append(F.linear(d, qd.dequantize_per_channel(w, ws, wz, 0, -128, 127, torch.int8), b))
        return out


@pytest.mark.parametrize(
    "freeze, dynamic", [(True, False), (False, False), (True, True)], ids=["frozen", "unfrozen", "frozen-dynamic-rows"]
)
def test_sibling_dynamic_linears_of_frozen_weights_are_one_product(freeze, dynamic):
    """Three int8 linear layers of one activation and frozen weights (merge-products) run as one oneDNN call of
    their weights side by side, each output its slice of the columns, with eager's numbers (for any number of rows,
    compiled dynamic); weights that are inputs of every call (no freezing) are not concatenated per call."""
    g = torch.Generator().manual_seed(7)
    model = SiblingLinears(40, [12, 7, 17]).eval()
    xs = [torch.randn(n, 40, generator=g) for n in ((9, 5, 13) if dynamic else (9,))]
    with torch.no_grad():
        compiled = compile_irc(model, dynamic=dynamic or None, freeze=freeze)
        mark = report.mark()
        for x in xs:
            for a, b in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-4)
        rep = report.reports_since(mark)
    paths = {p for g in rep.graphs for p in g.extern_paths}
    products = [e for g in rep.graphs for e in g.externs if e == "tn.qlinear_dynamic"]
    if FUSED and freeze:
        assert products == ["tn.qlinear_dynamic"], str(rep)
        rows = "?" if dynamic else "9"
        assert f"tn.qlinear_dynamic {rows}x40, 36x40 -> float32, post-op none" in paths, paths
    elif FUSED:
        assert len(products) == 3, str(rep)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_after_a_dynamic_linear_is_its_post_op(approximate):
    """A transformer's feed-forward under dynamic quantization: gelu over (batch, tokens, features) after the int8
    linear runs as oneDNN's post-op (no pass of its own), with eager's numbers."""
    g = torch.Generator().manual_seed(6)
    x, w = torch.randn(2, 7, 40, generator=g) * 3, weights(13, 40)

    def fn(x):
        s, z = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
        q = qd.quantize_per_tensor.tensor(x, s, z, 0, 255, torch.uint8)
        d = qd.dequantize_per_tensor.tensor(q, s, z, 0, 255, torch.uint8)
        y = F.linear(d, qd.dequantize_per_channel(w[0], w[1], w[2], 0, -128, 127, torch.int8), w[3])
        return F.gelu(y, approximate=approximate)

    torch.testing.assert_close(compile_irc(fn)(x), fn(x), rtol=1e-5, atol=1e-4)
    post = "gelu" if approximate == "none" else "gelu_tanh"
    paths = extern_paths(fn, x)
    assert not FUSED or paths == {f"tn.qlinear_dynamic 14x40, 13x40 -> float32, post-op {post}": "onednn"}, paths


@pytest.mark.parametrize("dynamic", [False, True])
def test_sums_that_overflow_int16_pairs_give_eagers_numbers(dynamic):
    """Activations at 255 against weights at 127 of one sign: each pair of products passes 32767, which oneDNN's
    kernels before VNNI sum in saturating int16; irc takes oneDNN's product only where it sums in int32 (VNNI, AMX),
    else the graph's float chain, so the result is eager's either way (float32 rounding apart)."""
    w = (torch.full((6, 64), 127, dtype=torch.int8), torch.full((6,), 0.01), torch.zeros(6, dtype=torch.int64))
    x = torch.full((5, 64), 255, dtype=torch.uint8)
    x[:, ::3] = 0

    def fn(x):
        d = qd.dequantize_per_tensor(x, XS, 0, 0, 255, torch.uint8)
        if dynamic:  # a float input, its parameters computed per call: the largest value quantizes to 255
            s, z = qd.choose_qparams.tensor(d, 0, 255, 0.000244140625, torch.uint8)
            d = qd.dequantize_per_tensor.tensor(
                qd.quantize_per_tensor.tensor(d, s, z, 0, 255, torch.uint8), s, z, 0, 255, torch.uint8
            )
        return F.linear(d, qd.dequantize_per_channel(*w, 0, -128, 127, torch.int8))

    torch.testing.assert_close(compile_irc(fn)(x), fn(x), rtol=1e-5, atol=1e-4)
    paths = extern_paths(fn, x)
    assert not FUSED or {p.split()[0] for p in paths} == {"tn.qlinear_dynamic" if dynamic else "tn.qlinear"}, paths
