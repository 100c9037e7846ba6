"""Products in the dtype the graph asks for: a bfloat16/float16 linear layer (aten.addmm) is one narrow tn.addmm, the
library's product in that dtype, where torch's library has kernels of its own for it (externs.narrow_products);
elsewhere, and with generated products (matmul="loops"), split-addmm makes it the float32 product, bias add and one
rounding. Numbers are
judged against a float64 reference: no worse than 1.5x eager's own error in that dtype, plus a floor of a few ulps."""

import copy
import math

import pytest
import torch

from irc import report
from irc.targets.cpu.libs import externs
from irc.targets.cpu.libs.externs import narrow_products, widened_products
from tests.conftest import compile_irc


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(96, 131), torch.nn.GELU(), torch.nn.Linear(131, 7), torch.nn.ReLU(), torch.nn.Linear(7, 5)
    ).eval()


def _judge(got, eager, ref, dtype):
    floor = 4 * torch.finfo(dtype).eps * ref.abs().max().item()
    err, eager_err = (got.double() - ref).abs().max().item(), (eager.double() - ref).abs().max().item()
    assert got.dtype == dtype and err <= 1.5 * eager_err + floor, (err, eager_err, floor)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("matmul", ["auto", "loops"])
def test_autocast_linear_layers_run_in_the_narrow_dtype(dtype, matmul):
    model, x = _mlp(), torch.randn(33, 96)
    ref = _mlp().double()(x.double())
    start = report.mark()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        got, eager = compile_irc(model, matmul=matmul)(x), model(x)
    _judge(got, eager, ref, dtype)
    (g,) = report.reports_since(start).graphs
    products = [p for p in g.extern_paths if p.startswith(("tn.mm", "tn.addmm"))]
    name = str(dtype).removeprefix("torch.")
    if matmul == "auto" and name in narrow_products():
        assert len(products) == 3 and all(p.startswith("tn.addmm") and name in p for p in products), products
    elif matmul == "auto":
        assert len(products) == 3 and all(p.startswith("tn.mm") and "float32" in p for p in products), products
    else:
        assert products == [], products  # generated: split into the float32 product, its bias and one rounding


def test_a_model_cast_whole_to_bfloat16():
    model, x = _mlp(), torch.randn(8, 96)
    ref = _mlp().double()(x.double())
    model = model.to(torch.bfloat16)
    with torch.no_grad():
        got, eager = compile_irc(model)(x.bfloat16()), model(x.bfloat16())
    _judge(got, eager, ref, torch.bfloat16)


class _Products(torch.nn.Module):
    """A convolution, a linear layer without bias (tn.mm) and an attention-like batched product (tn.bmm)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.lin = torch.nn.Linear(8 * 36, 32, bias=False)

    def forward(self, x):
        h = self.lin(torch.relu(self.conv(x)).flatten(1)).view(-1, 4, 8)
        return torch.bmm(h, h.transpose(1, 2))


PRODUCTS = ("tn.mm", "tn.bmm", "tn.addmm", "tn.convolution")


def _products(graphs) -> list[str]:
    return [p for g in graphs for p in g.extern_paths if p.startswith(PRODUCTS)]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
def test_every_product_of_a_training_step_runs_in_the_dtype_the_library_has_kernels_for(dtype, channels_last):
    """Cast whole: forward and backward products (mm, bmm, convolution and its backward) run in the graph's dtype
    where torch's library has kernels of its own for it (narrow_products), else as float32 products of the widened
    operands (widened_products), never in a reference loop; gradients judged against float64."""
    torch.manual_seed(0)
    model, x = _Products(), torch.randn(4, 3, 6, 6)
    if channels_last:
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    ref = _Products().double()
    ref.load_state_dict(model.state_dict())
    narrow, compiled = model.to(dtype), compile_irc(model.to(dtype))
    start = report.mark()
    got = compiled(x.to(dtype))
    got.float().square().sum().backward()
    grads = [p.grad.clone() for p in narrow.parameters()]
    narrow.zero_grad()
    eager = narrow(x.to(dtype))
    eager.float().square().sum().backward()
    want = ref(x.double())
    want.square().sum().backward()
    for g, e, r in [(got, eager, want)] + list(
        zip(grads, [p.grad for p in narrow.parameters()], [p.grad for p in ref.parameters()])
    ):
        _judge(g, e, r.double(), dtype)
    products = _products(report.reports_since(start).graphs)
    name = str(dtype).removeprefix("torch.")
    runs_in = name if name in narrow_products() else "float32"
    assert name in narrow_products() or name in widened_products()
    assert {p.split()[0] for p in products} >= {"tn.mm", "tn.bmm", "tn.convolution", "tn.convolution_backward"}, (
        products
    )
    assert all(f" {runs_in}" in p for p in products), products


class _FeedForward(torch.nn.Module):
    def __init__(self, act: str):
        super().__init__()
        self.up, self.down, self.act = torch.nn.Linear(96, 384), torch.nn.Linear(384, 96), act

    def forward(self, x):
        h = self.up(x)
        if self.act == "gpt2":  # GPT-2's NewGELUActivation, written out: each of its ops rounds in the narrow dtype
            h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        elif self.act != "none":
            h = torch.nn.functional.gelu(h, approximate="tanh" if self.act == "gelu_tanh" else "none")
        return self.down(h)


@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "gpt2"])
def test_a_bfloat16_linear_layer_takes_its_gelu_into_onednn(act):
    """A bf16 linear layer (one tn.addmm) and the gelu after it run as one oneDNN call with the gelu as its post-op
    wherever oneDNN has bf16 kernels (torch.addmm would run the same oneDNN product, then the gelu as a pass of its
    own), or as a float32 product where the library has no bf16 kernels and oneDNN outruns MKL: the gelu of the
    float32 sum, rounded once; no kernel of its own (as many as the same layers without the gelu), NaN kept where
    eager keeps it. The tanh form (torch's, or GPT-2's written out) stays irc's kernel after a bf16 product:
    oneDNN's made GPT-2 slower."""
    torch.manual_seed(0)
    model, x = _FeedForward(act).eval(), torch.randn(4, 67, 96)
    ref = model.double()(x.double())
    x[0, 0, 0] = float("nan")
    model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    start = report.mark()
    with torch.no_grad():
        got, eager = compile_irc(model)(x), model(x)
        compile_irc(_FeedForward("none").to(torch.bfloat16).eval())(x)
    with_gelu, without = report.reports_since(start).graphs
    assert torch.equal(got.isnan(), eager.isnan())
    keep = ~eager.isnan()
    _judge(got[keep], eager[keep], ref[keep], torch.bfloat16)
    # a bf16 product widened (no bf16 kernels here) is a float32 one on the frozen weight's float32 copy, whose gelu
    # oneDNN takes as in float32 where oneDNN outruns MKL
    widened_on_onednn = "bfloat16" in widened_products() and externs.onednn_outruns_mkl()
    if "bfloat16" in narrow_products() and act == "gelu" or widened_on_onednn:
        up = [path for problem, path in with_gelu.extern_paths.items() if "@ 96x384" in problem]
        assert up == ["mkldnn"], with_gelu.extern_paths  # the down projection's path is the rule's without a gelu
        assert with_gelu.fused_kernels == without.fused_kernels, (with_gelu.fused_kernels, without.fused_kernels)
    else:
        assert with_gelu.fused_kernels == without.fused_kernels + 1


class _ConvLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 32, 3, padding=1)
        self.lin = torch.nn.Linear(32 * 8 * 8, 64)

    def forward(self, x):
        return self.lin(torch.relu(self.conv(x)).flatten(1))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_frozen_weights_of_widened_products_are_widened_once(dtype):
    """Where torch's library has no kernels of its own for the dtype (widened_products), a frozen model's products
    are float32 ones on float32 copies of its weights made once, when the graph is frozen (split-addmm ends
    tensor-opt, before the freezer's second fold), not converted in every call: no call plans a buffer for a widened
    weight. Without freezing each call widens them."""
    name = str(dtype).removeprefix("torch.")
    torch.manual_seed(0)
    model, x = _ConvLinear().eval().to(dtype), torch.randn(2, 8, 8, 8).to(dtype)
    ref = _ConvLinear().double()
    ref.load_state_dict(model.state_dict())
    weights = 4 * (model.conv.weight.numel() + model.lin.weight.numel())  # the float32 copies, in bytes
    start = report.mark()
    with torch.no_grad():
        got, eager = compile_irc(model)(x), model(x)
        compile_irc(copy.deepcopy(model), freeze=False)(x)
    frozen_graph, unfrozen_graph = report.reports_since(start).graphs
    _judge(got, eager, ref(x.double()), dtype)
    products = _products([frozen_graph])
    if name in widened_products():
        assert all(" float32" in p for p in products), products
        assert frozen_graph.intermediate_bytes < weights <= unfrozen_graph.intermediate_bytes, (
            frozen_graph.intermediate_bytes,
            unfrozen_graph.intermediate_bytes,
        )
    else:
        assert all(f" {name}" in p for p in products), products
