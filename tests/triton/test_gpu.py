"""Tensors on a GPU: torch.compile(backend="irc") runs them on the Triton target unless the user names another, the
cpu target refuses them (its JITed code reads host memory) and leaves that graph to eager, and an index out of
bounds raises eager's IndexError before any kernel reads (on CUDA eager itself stops with a device-side assert that
breaks the process's CUDA context). tests/triton/test_codegen.py and test_backend.py run natively on a GPU too
(tests/triton/programs.py: on_device)."""

import pytest
import torch

import irc
from irc import report
from tests.triton.programs import DEVICE

needs_gpu = pytest.mark.skipif(DEVICE.type == "cpu", reason="needs a GPU (Triton's interpreter runs on CPU tensors)")


def row_sum(w, i):
    return (w[i] * 2).sum(0)


def test_the_cpu_target_leaves_tensors_elsewhere_to_eager():
    """On meta tensors (a device the cpu target cannot read, as a GPU's) the graph runs eagerly, and the report says why."""
    x = torch.randn(4, 5, device="meta")
    mark = report.mark()
    got = torch.compile(lambda t: torch.softmax(t * 2, -1), backend=irc.backend, options={"target": "cpu"})(x)
    assert got.device.type == "meta" and got.shape == (4, 5)
    (g,) = report.reports_since(mark).graphs
    assert "the cpu target runs CPU tensors, and this graph's are on meta" in g.eager_graph, str(g)


@needs_gpu
def test_gpu_tensors_choose_the_triton_target():
    fn = lambda x, y: torch.softmax(x * y, -1).relu() + x.sum(-1, keepdim=True)  # noqa: E731
    x, y = torch.randn(7, 33, device=DEVICE), torch.randn(33, device=DEVICE)
    mark = report.mark()
    got = torch.compile(fn, backend=irc.backend)(x, y)
    assert got.device == x.device
    torch.testing.assert_close(got, fn(x, y))
    graphs = report.reports_since(mark).graphs
    assert graphs and all(g.target == "triton" and not g.target_fallbacks for g in graphs), str(
        report.reports_since(mark)
    )


@needs_gpu
def test_an_index_out_of_bounds_raises_index_error_and_the_device_stays_usable():
    w = torch.randn(10, 4)
    compiled = torch.compile(row_sum, backend=irc.backend)
    good = torch.tensor([1, -3])
    torch.testing.assert_close(compiled(w.to(DEVICE), good.to(DEVICE)).cpu(), row_sum(w, good))
    for bad in ([1, 12], [-11, 0], [10**9, 0]):
        with pytest.raises(IndexError) as want:
            row_sum(w, torch.tensor(bad))  # eager's message, from the CPU (on CUDA eager asserts on the device)
        with pytest.raises(IndexError) as got:
            compiled(w.to(DEVICE), torch.tensor(bad, device=DEVICE))
        assert str(got.value) == str(want.value)
    torch.testing.assert_close(compiled(w.to(DEVICE), good.to(DEVICE)).cpu(), row_sum(w, good))
    torch.cuda.synchronize()  # a device-side fault would surface here


@needs_gpu
def test_a_model_on_the_gpu_trains_through_the_default_options():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64), torch.nn.Linear(64, 10)
    )
    model = model.to(DEVICE)
    x, target = torch.randn(16, 32, device=DEVICE), torch.randint(0, 10, (16,), device=DEVICE)
    step = lambda m: torch.nn.functional.cross_entropy(m(x), target)  # noqa: E731
    mark = report.mark()
    step(torch.compile(model, backend=irc.backend)).backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    step(model).backward()
    for g, w in zip(got, [p.grad for p in model.parameters()]):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    kinds = {g.kind for g in report.reports_since(mark).graphs if g.target == "triton"}
    assert kinds >= {"forward", "backward"}, str(report.reports_since(mark))


@needs_gpu
def test_the_triton_target_leaves_cpu_tensors_to_eager_on_a_gpu_machine():
    """With a GPU, Triton compiles for it: CPU tensors cannot reach its kernels, so the graph runs eagerly, and says why."""
    x = torch.randn(4, 5)
    mark = report.mark()
    got = torch.compile(lambda t: torch.softmax(t * 2, -1), backend=irc.backend, options={"target": "triton"})(x)
    torch.testing.assert_close(got, torch.softmax(x * 2, -1))
    (g,) = report.reports_since(mark).graphs
    assert "the triton target runs GPU tensors here, and this graph's are on cpu" in g.eager_graph, str(g)
