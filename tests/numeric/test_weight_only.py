"""Weight-only int8 linear layers (torchao's quantize_(model, Int8WeightOnlyConfig()), per-row scales) compile with no
eager fallback, each layer one tn.weight_int8_mm (lowering/weight_only.py): up to GENERATED_ROWS static rows a
generated kernel that reads the weight as int8 (no library call), more rows the library's product of the weight
widened for that call; both agree with eager to the dtype's rounding and with a float64 product of the dequantized
weights. torchao's CPU int4 runs torch's int4 kernel as one tn.weight_int4_mm; a scheme irc has no op
for runs as a reported eager call, never a wrong answer."""

import pytest
import torch

import irc
from irc import report
from irc.lowering.weight_only import GENERATED_ROWS

pytest.importorskip("torchao")
from torchao.quantization import Int8WeightOnlyConfig, PerGroup, quantize_


def _mlp(features=37, hidden=53, classes=11, dtype=torch.float32, seed=0):
    """Linear-ReLU-Linear of prime sizes, its weights int8 (per-row scales)."""
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes))
    m = m.eval().to(dtype)
    quantize_(m, Int8WeightOnlyConfig())
    return m


def _reference64(m, x):
    """The MLP in float64 over its dequantized weights (each int8 row times its scale)."""
    h = x.double()
    for layer in m:
        if isinstance(layer, torch.nn.Linear):
            w = layer.weight.qdata.double() * layer.weight.scale.double().reshape(-1, 1)
            h = h @ w.t() + layer.bias.double()
        else:
            h = layer(h)
    return h


def _compile(m, *inputs):
    """(compiled output, the report) under strict: any fallback raises."""
    with torch.no_grad():
        mark = report.mark()
        got = torch.compile(m, backend=irc.backend, options={"strict": True})(*inputs)
        return got, report.reports_since(mark)


def _native_weight_only(rep, layers: int, generated: bool = False):
    """No fallback; each layer a generated kernel (no extern at all: the weight never reaches a float product) or
    one tn.weight_int8_mm extern, never tn.mm of a widened weight."""
    assert rep.native and not rep.fallbacks, str(rep)
    assert not [f for g in rep.graphs for f in g.target_fallbacks], str(rep)
    externs = [e for g in rep.graphs for e in g.externs]
    assert externs == ([] if generated else ["tn.weight_int8_mm"] * layers), str(rep)


def _close(got, want, ref64, dtype):
    """Within dtype rounding of eager, and of the float64 product (scaled by the output's magnitude)."""
    eps = torch.finfo(dtype).eps
    scale = ref64.abs().max().item()
    torch.testing.assert_close(got, want, rtol=16 * eps, atol=16 * eps * scale)
    torch.testing.assert_close(got.double(), ref64, rtol=16 * eps, atol=16 * eps * scale)


@pytest.mark.parametrize("batch", [1, 3, GENERATED_ROWS + 3])
def test_int8_weight_only_mlp(batch):
    """Prime in and out features, batch 1, 3 (generated kernels reading int8) and 7 (the library's product): before,
    every weight was copied transposed into a float32 buffer each call, then tn.mm; the result eager's to float32
    rounding."""
    m = _mlp()
    x = torch.randn(batch, 37)
    with torch.no_grad():
        want = m(x)
    got, rep = _compile(m, x)
    _native_weight_only(rep, 2, generated=batch <= GENERATED_ROWS)
    _close(got, want, _reference64(m, x), torch.float32)


def test_int8_weight_only_3d_input():
    """(batch, seq, features) activations: the layer reshapes them around its 2-d product."""
    m = _mlp()
    x = torch.randn(2, 5, 37)
    with torch.no_grad():
        want = m(x)
    got, rep = _compile(m, x)
    _native_weight_only(rep, 2)  # 10 rows
    assert got.shape == (2, 5, 11)
    _close(got, want, _reference64(m, x), torch.float32)


def test_int8_weight_only_dynamic_batch():
    """One graph of a symbolic batch serves batches 5, 7 and 3."""
    m = _mlp()
    compiled = torch.compile(m, backend=irc.backend, options={"strict": True}, dynamic=True)
    mark = report.mark()
    with torch.no_grad():
        for batch in (5, 7, 3):
            x = torch.randn(batch, 37)
            _close(compiled(x), m(x), _reference64(m, x), torch.float32)
    rep = report.reports_since(mark)
    assert len(rep.graphs) == 1, str(rep)
    _native_weight_only(rep, 2)
    assert all(p.startswith("tn.weight_int8_mm ?x") for p in rep.graphs[0].extern_paths), str(rep)


@pytest.mark.parametrize("batch", [1, GENERATED_ROWS + 3])
def test_int8_weight_only_bfloat16_odd_sizes(batch):
    """bfloat16 activations and scales, prime sizes (where torch's own bfloat16 _weight_int8pack_mm crashed or
    returned garbage on an AVX2-only EPYC), generated and library products: within bfloat16 rounding of eager and of
    float64."""
    m = _mlp(dtype=torch.bfloat16)
    x = torch.randn(batch, 37, dtype=torch.bfloat16)
    with torch.no_grad():
        want = m(x)
    got, rep = _compile(m, x)
    _native_weight_only(rep, 2, generated=batch <= GENERATED_ROWS)
    assert got.dtype == torch.bfloat16
    _close(got, want, _reference64(m, x), torch.bfloat16)


def test_weight_int8pack_mm_imports():
    """torch's own weight-only product in a graph is tn.weight_int8_mm (before: an eager call), odd sizes."""
    torch.manual_seed(0)
    x, w, s = torch.randn(3, 37), torch.randint(-128, 128, (53, 37), dtype=torch.int8), torch.rand(53) / 64

    def fn(x, w, s):
        return torch.ops.aten._weight_int8pack_mm(x, w, s).relu()

    got, rep = _compile(fn, x, w, s)
    _native_weight_only(rep, 1, generated=True)
    ref64 = ((x.double() @ w.double().t()) * s.double()).relu()
    _close(got, fn(x, w, s), ref64, torch.float32)


def test_per_group_scales_compile_as_a_float_graph():
    """Per-group scales (a weight dequantized whole, then the product) are no weight_int8_mm: the float graph,
    compiled natively and eager's to float32 rounding."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 53)).eval()
    quantize_(m, Int8WeightOnlyConfig(granularity=PerGroup(16)))
    x = torch.randn(3, 64)
    with torch.no_grad():
        want = m(x)
    got, rep = _compile(m, x)
    assert rep.native and not rep.fallbacks, str(rep)
    assert "tn.weight_int8_mm" not in [e for g in rep.graphs for e in g.externs], str(rep)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int4_weight_only_runs_torchs_cpu_kernel(dtype):
    """torchao's CPU int4 (the prototype Int4OpaqueTensor: torch's _weight_int4pack_mm_for_cpu on tinygemm's packed
    layout, groups of 32) is one tn.weight_int4_mm (before: an eager call inside the graph), batch 1 and 3-d
    activations, eager's result to the dtype's rounding (the bias and ReLU in irc's own kernel)."""
    from torchao.prototype.quantization.int4.inference_workflow import PrototypeInt4WeightOnlyConfig

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(96, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).eval().to(dtype)
    quantize_(m, PrototypeInt4WeightOnlyConfig(group_size=32))
    for x in (torch.randn(1, 96, dtype=dtype), torch.randn(2, 5, 96, dtype=dtype)):
        torch._dynamo.reset()
        with torch.no_grad():
            want = m(x)
        got, rep = _compile(m, x)
        assert rep.native and not rep.fallbacks, str(rep)
        assert [e for g in rep.graphs for e in g.externs].count("tn.weight_int4_mm") == 2, str(rep)
        eps = torch.finfo(dtype).eps
        torch.testing.assert_close(got, want, rtol=4 * eps, atol=4 * eps * want.abs().max().item())


def test_a_scheme_without_an_irc_op_runs_as_a_reported_eager_call():
    """torchao's Int8DynamicActivationInt8WeightConfig multiplies int8 activations and weights with aten._int_mm,
    which irc has no op for: the call runs eagerly inside the compiled graph, the report says so, the answer is
    eager's."""
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.ReLU()).eval()
    quantize_(m, Int8DynamicActivationInt8WeightConfig())
    x = torch.randn(3, 64)
    with torch.no_grad():
        want = m(x)
        mark = report.mark()
        got = torch.compile(m, backend=irc.backend)(x)
        rep = report.reports_since(mark)
    assert [t for t, _ in rep.fallbacks] == ["aten::_int_mm.default"], str(rep)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6 * want.abs().max().item())
