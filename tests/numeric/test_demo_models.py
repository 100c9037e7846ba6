"""The demo models (irc.bench.models) compiled with irc match eager: forward, one training step, graph
breaks and dynamic sequence lengths; and the MLP, ConvNet and MiniTransformer graphs hold no eager fallback."""

import pytest
import torch

import irc
from irc import report
from irc.bench import models as M
from irc.bench.check import (
    FORWARD_TOL,
    GRAD_TOL,
    GRAD_TOL_F64,
    assert_close,
    compare_steps,
    loss_fn,
    targets_for,
    train_step,
    twin,
)
from tests.conftest import compile_irc

FORWARD = {
    "mlp-b32": lambda: M.mlp(32),
    "mlp-b1024": lambda: M.mlp(1024),
    "convnet-eval": lambda: M.convnet(train=False),
    "convnet-train": lambda: M.convnet(train=True),
    "mini-transformer": lambda: M.mini_transformer(dropout=0.0),
    "mini-transformer-mask": lambda: M.mini_transformer(dropout=0.0, mask=True),
}


def _float64(made):
    model, inputs = made
    return model.double(), tuple(x.double() for x in inputs)


TRAIN = {
    "mlp": lambda: M.mlp(32),
    # float64: in float32 this seed's second ReLU has an input 5.3e-8 from zero, which rounding may put on either
    # side (BatchNorm statistics summed 2-4 vectors wide gave 0 where eager gives 5.3e-8); that one mask element
    # moves a conv weight gradient by 4.5e-4 while everything else agrees to rounding (docs/cpu-target.md)
    "convnet": lambda: _float64(M.convnet(train=True)),
    "mini-transformer": lambda: M.mini_transformer(dropout=0.0),
}


@pytest.mark.parametrize("name", FORWARD)
def test_forward_matches_eager(name):
    model, inputs = FORWARD[name]()
    mine = twin(model)
    with torch.no_grad():
        want = model(*inputs)
        got = compile_irc(mine)(*inputs)
    assert_close("forward output", got, want, FORWARD_TOL)
    for (n, b), (_, b2) in zip(model.named_buffers(), mine.named_buffers()):  # train-mode BatchNorm statistics
        assert_close(f"buffer {n}", b2, b, FORWARD_TOL)


@pytest.mark.parametrize("name", TRAIN)
def test_training_step_matches_eager(name):
    """Loss, every parameter gradient, BatchNorm running statistics, parameters after SGD with momentum."""
    model, inputs = TRAIN[name]()
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    got = train_step(mine, inputs, compile_irc(loss_fn(mine)), target, optimizer="sgd")
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    assert set(got.grads) == {n for n, p in model.named_parameters()}
    if name == "convnet":
        assert {n for n in got.buffers if "running" in n} == {
            f"features.{i}.running_{s}" for i in (1, 4) for s in ("mean", "var")
        }
    compare_steps(got, want, GRAD_TOL_F64 if got.loss.dtype == torch.float64 else GRAD_TOL)


def test_mini_transformer_dropout_is_random_but_trains():
    """With dropout on, outputs differ from run to run but the compiled model still runs forward and backward."""
    model, (ids,) = M.mini_transformer(batch=2, seq=16, dropout=0.5)
    model.train()
    out = compile_irc(model)(ids)
    out.sum().backward()
    assert out.shape == (2, 10) and all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_graph_break_matches_eager_on_both_branches(sign):
    fn, (x, w) = M.graph_break()
    x = x.abs() * sign  # tanh(x @ w) sums positive for positive x and w's mean direction; flip to take the other branch
    w = w.abs()
    mark = report.mark()
    torch.testing.assert_close(compile_irc(fn)(x, w), fn(x, w), **FORWARD_TOL)
    graphs = report.reports_since(mark).graphs
    assert len({g.dynamo_graph for g in graphs}) == 2, "`if h.sum() > 0` must split the function into two graphs"


def test_dynamic_sequence_length_compiles_once():
    fn, (x, w) = M.dynamic_seq(48)
    compiled = compile_irc(fn, dynamic=True)
    mark = report.mark()
    for i, n in enumerate((48, 17, 128, 5, 2)):  # not 1: Dynamo specializes sizes 0 and 1 (a recompile)
        _, (x, w) = M.dynamic_seq(n, seed=i)
        torch.testing.assert_close(compiled(x, w), fn(x, w), **FORWARD_TOL)
    graphs = report.reports_since(mark).graphs
    assert len({g.dynamo_graph for g in graphs}) == 1, str(report.reports_since(mark))
    assert all(g.eager_graph is None for g in graphs), str(report.reports_since(mark))


def test_automatic_dynamic_recompiles_once_with_a_dynamic_dim():
    fn, _ = M.dynamic_seq(48)
    compiled = compile_irc(fn)  # dynamic=None: static first, then one recompile with the changed dim dynamic
    mark = report.mark()
    for i, n in enumerate((48, 96, 33, 7)):
        _, (x, w) = M.dynamic_seq(n, seed=i)
        torch.testing.assert_close(compiled(x, w), fn(x, w), **FORWARD_TOL)
    graphs = report.reports_since(mark).graphs
    assert len({g.dynamo_graph for g in graphs}) == 2, str(report.reports_since(mark))


NATIVE = {
    "mlp": lambda: M.mlp(32),
    "convnet-eval": lambda: M.convnet(train=False),
    "convnet-train": lambda: M.convnet(train=True),
    "mini-transformer": lambda: M.mini_transformer(dropout=0.0),
}


@pytest.mark.parametrize("name", NATIVE)
def test_no_fallback_in_forward_and_backward(name):
    """Every aten op of these models' forward and backward graphs has an irc translation."""
    model, inputs = NATIVE[name]()
    inference = irc.explain(twin(model).eval(), *inputs, options={"strict": True})  # grad enabled: the forward graph
    torch._dynamo.reset()
    mark = report.mark()
    out = compile_irc(model)(*inputs)
    out.backward(torch.randn_like(out))
    training = report.reports_since(mark)
    assert {g.kind for g in training.graphs} == {"forward", "backward"}, str(training)
    rep = report.CompileReport(inference.graphs + training.graphs)
    assert [g.eager_graph for g in rep.graphs if g.eager_graph] == [], str(rep)
    assert sorted({f[0] for f in rep.fallbacks}) == [], str(rep)  # the distinct ops first, the whole report below
    assert rep.fallbacks == [], str(rep)


def test_demo_runs_and_reports(capsys):
    from irc.bench import demo

    assert demo.main(["--models", "graph-break,dynamic-seq", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "2/2 models match eager" in out and "speed forward" in out


def test_demo_reports_a_failing_model_and_goes_on(capsys):
    from irc.bench import demo

    def broken():
        return (lambda x: x + 1), ("not a tensor",)

    def wrong():  # each call multiplies by one more than the last: the compiled run cannot match eager's
        calls = []

        def fn(x):
            calls.append(1)
            return x * len(calls)

        return fn, (torch.ones(3),)

    outcomes = [
        demo.run_demo(M.Demo(name, make), {}, repeats=0, train=False)
        for name, make in (("broken", broken), ("wrong", wrong))
    ]
    assert [o.ok for o in outcomes] == [False, False]
    out = capsys.readouterr().out
    assert "FAILED: ERROR" in out and "FAILED: MISMATCH" in out
