"""torch.compile(..., options={"target": "triton"}) end to end, under the interpreter without a GPU: the demo
models forward and one training step (small sizes), the compile report, kernels that fall back with their
reason, the tl.dot template with its fused epilogue, max-autotune, and the source files in the cache."""

import functools

import pytest
import torch
import torch.nn.functional as F

import irc
from irc import report
from irc.bench import models as M
from irc.bench.check import FORWARD_TOL, assert_close, compare_steps, loss_fn, targets_for, train_step, twin
from irc.targets.triton import ops
from tests.conftest import compile_irc
from tests.cpu.programs import tolerance
from tests.triton.programs import check, on_device

G = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32):
    return on_device(torch.randn(*shape, generator=G).to(dtype))


def triton_graphs(mark):
    graphs = report.reports_since(mark).graphs
    assert graphs and all(g.target == "triton" for g in graphs), str(report.reports_since(mark))
    return graphs


def assert_native(mark):
    """Every graph since `mark` ran on the Triton target with no kernel on the reference evaluator."""
    graphs = triton_graphs(mark)
    assert [f for g in graphs for f in g.target_fallbacks] == [], str(report.reports_since(mark))


FORWARD = {
    "mlp": lambda: M.mlp(4),
    "convnet-eval": lambda: M.convnet(batch=2, train=False),
    "mini-transformer-mask": lambda: M.mini_transformer(batch=2, seq=16, dropout=0.0, mask=True),
}


@pytest.mark.parametrize("name", FORWARD)
def test_demo_model_forward(name):
    model, inputs = on_device(FORWARD[name]())
    mark = report.mark()
    with torch.no_grad():
        got = compile_irc(twin(model), target="triton")(*inputs)
        want = model(*inputs)
    assert_close("forward output", got, want, FORWARD_TOL)
    assert_native(mark)


TRAIN = {
    "mlp": lambda: M.mlp(4),
    "convnet": lambda: M.convnet(batch=2, train=True),
    "mini-transformer": lambda: M.mini_transformer(batch=2, seq=16, dropout=0.0),
}


@pytest.mark.parametrize("name", TRAIN)
def test_demo_model_training_step(name):
    """Loss, every gradient, BatchNorm statistics and parameters after one SGD step, forward and backward on Triton."""
    model, inputs = on_device(TRAIN[name]())
    mine = twin(model)
    with torch.no_grad():
        target = on_device(targets_for(twin(model)(*inputs)))
    mark = report.mark()
    got = train_step(mine, inputs, compile_irc(loss_fn(mine), target="triton"), target, optimizer="sgd")
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    compare_steps(got, want)
    assert {g.kind for g in triton_graphs(mark)} >= {"forward", "backward"}


def test_dynamic_sizes_compile_once():
    fn, _ = M.dynamic_seq(48)
    compiled = compile_irc(fn, dynamic=True, target="triton")
    mark = report.mark()
    for i, n in enumerate((48, 17, 5)):
        _, (x, w) = on_device(M.dynamic_seq(n, seed=i))
        torch.testing.assert_close(compiled(x, w), fn(x, w), **FORWARD_TOL)
    assert len({g.dynamo_graph for g in report.reports_since(mark).graphs}) == 1


def test_report_names_the_target_and_a_kernel_it_could_not_emit(monkeypatch):
    """A kernel without an emitter for one of its ops runs on the reference evaluator; the report says why."""
    monkeypatch.delitem(ops.OPS, ops.math.ErfOp)
    fn = lambda x: (torch.erf(x) * 2, torch.softmax(x, -1))  # noqa: E731
    x = randn(4, 9)
    mark = report.mark()
    got = compile_irc(fn, target="triton")(x)
    torch.testing.assert_close(got, fn(x))
    (g,) = triton_graphs(mark)
    assert any("no Triton emitter for math.erf" in reason for _, reason in g.target_fallbacks), str(g)
    assert "triton:" in str(g) and "math.erf" in str(g)


def test_a_runtime_that_cannot_start_leaves_the_graph_on_the_reference(monkeypatch):
    """No usable Triton (not installed, no driver): the mem-stage reference runs the graph, and the report says why."""
    from irc.targets.triton import runtime

    def broken(*a, **k):
        raise ImportError("no module named triton")

    monkeypatch.setattr(runtime, "TritonRunner", broken)
    fn = lambda x: torch.softmax(x * 2, -1)  # noqa: E731
    x = randn(3, 5)
    mark = report.mark()
    torch.testing.assert_close(torch.compile(fn, backend="irc", options={"target": "triton"})(x), fn(x))
    (g,) = report.reports_since(mark).graphs
    assert g.target_fallbacks == [("graph", "triton runtime: ImportError: no module named triton")], str(g)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_matmul_dot_template_fuses_the_epilogue(dtype):
    x, w, b, r = (
        randn(13, 40, dtype=dtype),
        randn(24, 40, dtype=dtype),
        randn(24, dtype=dtype),
        randn(13, 24, dtype=dtype),
    )
    runner = check(lambda x, w, b, r: F.linear(x, w, b).relu() + r, x, w, b, r, matmul="dot")
    ((_, plan),) = runner.functions.dots.values()
    assert plan.launch is not None, "the bias-relu-residual kernel is the template's epilogue"
    runner = check(lambda x, w: ((x @ w.t()).sum(-1), x @ w.t()), x, w, matmul="dot")  # a product others read too
    ((_, plan),) = runner.functions.dots.values()
    assert plan.launch is None


def test_bmm_dot_template_with_and_without_epilogue():
    runner = check(
        lambda a, b, c: (torch.bmm(a, b) * 2 + c).relu(), randn(2, 17, 9), randn(2, 9, 33), randn(33), matmul="dot"
    )
    assert [plan.launch is not None for _, plan in runner.functions.dots.values()] == [True]
    check(
        lambda a, b: torch.bmm(a, b),
        randn(3, 8, 16),
        randn(3, 16, 5).transpose(1, 2).contiguous().transpose(1, 2),
        matmul="dot",
    )


def test_matmul_dot_template_dynamic_and_strided():
    check(
        lambda x, w, b: torch.tanh(x @ w + b),
        randn(9, 17)[:, ::1],
        randn(34, 5)[::2],
        randn(5),
        matmul="dot",
        dynamic=True,
        more=[(randn(3, 17), randn(17, 5), randn(5))],
    )


def test_matmul_dot_through_the_backend_and_max_autotune():
    fn = lambda x, w, b: F.gelu(F.linear(x, w, b))  # noqa: E731
    x, w, b = randn(8, 16), randn(12, 16), randn(12)
    mark = report.mark()
    got = compile_irc(fn, target="triton", matmul="dot")(x, w, b)
    torch.testing.assert_close(got, fn(x, w, b), **tolerance(torch.float32))
    torch._dynamo.reset()
    tuned = functools.partial(
        irc.backend, mode="max-autotune", options={"target": "triton", "strict": True, "matmul": "dot"}
    )
    got = torch.compile(fn, backend=tuned)(x, w, b)
    torch.testing.assert_close(got, fn(x, w, b), **tolerance(torch.float32))
    assert_native(mark)


def test_bad_matmul_option_names_the_choices():
    with pytest.raises(ValueError, match="valid choices: auto, extern, loops, dot"):
        irc.Options.resolve(options={"target": "triton", "matmul": "cublas"})


def test_sources_are_files_in_the_cache(tmp_path, monkeypatch):
    from irc import cache

    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    cache.set_dir(None)
    check(lambda x: torch.sigmoid(x) * 3 - 1, randn(6, 7))
    files = list((tmp_path / "triton").rglob("*.py"))
    assert files and all("@triton.jit" in f.read_text() for f in files)
