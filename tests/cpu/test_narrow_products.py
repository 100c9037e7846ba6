"""Products in the dtype the graph asks for: a bfloat16/float16 linear layer (aten.addmm) is one narrow tn.addmm, the
library's product in that dtype, where torch's library has kernels of its own for it (externs.narrow_products);
elsewhere, and with generated products (matmul="loops"), split-addmm makes it the float32 product, bias add and one
rounding. Numbers are
judged against a float64 reference: no worse than 1.5x eager's own error in that dtype, plus a floor of a few ulps."""

import pytest
import torch

from irc import report
from irc.targets.cpu.libs.externs import narrow_products
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
