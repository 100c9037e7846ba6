"""Inference freezing (options={"freeze": ...}): parameters and buffers of inference graphs become constants,
BatchNorm folds into the convolution or linear layer before it, constant computations are evaluated once; the
frozen graph follows parameters that change after compiling. Against eager, freezing on and off."""

import copy

import pytest
import torch
import torch.nn as nn

import irc
from irc.options import Options
from tests.conftest import compile_irc

TOL = dict(atol=1e-5, rtol=1e-5)


def convnet():
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 6, 3, bias=False),
        nn.BatchNorm2d(6, affine=False),
        nn.Flatten(),
        nn.Linear(6 * 5 * 5, 5),
    )
    for bn in (m[1], m[4]):  # statistics that are not the defaults, so a wrong fold shows
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    if m[1].affine:
        nn.init.uniform_(m[1].weight, 0.5, 1.5), nn.init.uniform_(m[1].bias, -0.5, 0.5)
    return m.eval(), torch.randn(2, 3, 7, 7)


def mlp_bn():
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(12, 9), nn.BatchNorm1d(9), nn.ReLU(), nn.Linear(9, 4, bias=False), nn.BatchNorm1d(4))
    for bn in (m[1], m[4]):
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    return m.eval(), torch.randn(5, 12)


class Positions(nn.Module):
    """Token plus learned position embeddings: the positions' lookup is a computation of constants only."""

    def __init__(self):
        super().__init__()
        self.tok, self.pos, self.out = nn.Embedding(20, 8), nn.Embedding(16, 8), nn.Linear(8, 3)

    def forward(self, ids):
        return self.out(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))


def positions():
    torch.manual_seed(2)
    return Positions().eval(), torch.randint(0, 20, (2, 11))


MODELS = {"convnet": convnet, "linear-bn": mlp_bn, "positions": positions}


@pytest.mark.parametrize("freeze", [None, False], ids=["freeze", "no-freeze"])
@pytest.mark.parametrize("name", MODELS)
def test_inference_matches_eager(name, freeze):
    model, x = MODELS[name]()
    with torch.no_grad():
        got = compile_irc(model, freeze=freeze)(x)
        torch.testing.assert_close(got, model(x), **TOL)


@pytest.mark.parametrize("name, batch_norms", [("convnet", 2), ("linear-bn", 2), ("positions", 0)])
def test_report_says_what_was_folded(name, batch_norms):
    model, x = MODELS[name]()
    with torch.no_grad():
        [g] = irc.explain(model, x, options={"strict": True}).graphs
        assert g.freeze is not None and f"{batch_norms} BatchNorm into the layer before" in g.freeze
        assert "freeze:" in str(g)
        if batch_norms:  # no BatchNorm is left to run
            assert "batch_norm" not in " ".join(g.externs) and "batch_norm" not in g.freeze.split(":")[0]
        [g] = irc.explain(model, x, options={"strict": True, "freeze": False}).graphs
        assert g.freeze is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_autocast_batch_norm_folds_into_its_convolution(dtype):
    """Under autocast a narrow convolution's float32 BatchNorm folds too (from the float32 weight and bias autocast
    rounded, rounded once); the output, the logits of three layers, is judged against float64 beside eager's by
    rule 1 (tests/numeric/low_precision.py: rule 2 does not fit a model's outputs). The compiled call runs that
    frozen graph: a second instance of the module class gets a frozen compile of its own."""
    from irc import report
    from tests.numeric.low_precision import assert_low_precision_close

    model, x = convnet()
    ref = copy.deepcopy(model).double()(x.double())
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        [g] = irc.explain(copy.deepcopy(model), x, options={"strict": True}).graphs
        start = report.mark()
        got, eager = compile_irc(copy.deepcopy(model))(x), model(x)
    ran = report.reports_since(start).graphs
    for r in (g, *ran):
        assert r.freeze is not None and "2 BatchNorm into the layer before" in r.freeze, r.freeze
    assert ran, "the compiled call compiled no graph of its own"
    assert_low_precision_close(got, eager, ref, dtype, per_element=False)


def test_training_graphs_are_not_frozen():
    model, x = convnet()
    model.train()
    graphs = irc.explain(model, x, options={"strict": True}).graphs
    assert graphs and all(g.freeze is None for g in graphs)


@pytest.mark.parametrize("change", ["in-place", "load_state_dict", "new-parameter"])
def test_a_parameter_changed_after_compiling_is_seen(change):
    model, x = convnet()
    compiled = compile_irc(model)
    with torch.no_grad():
        compiled(x)
        if change == "in-place":
            model[1].running_var.mul_(3.0)
            model[0].weight.add_(0.25)
        elif change == "load_state_dict":
            other, _ = convnet()
            for p in other.parameters():
                p.data.normal_()
            model.load_state_dict(other.state_dict())
        else:
            model[0].weight = nn.Parameter(torch.randn_like(model[0].weight))
        torch.testing.assert_close(compiled(x), model(x), **TOL)
        torch.testing.assert_close(compiled(x), model(x), **TOL)  # and on the calls after


def _instances(n: int):
    """n instances of convnet's module class, each with its own parameters and statistics."""
    models = [convnet()[0] for _ in range(n)]
    for k, m in enumerate(models):
        with torch.no_grad():
            m[0].weight.mul_(1 + k)
            m[1].running_mean.add_(k)
    return models


def test_instances_of_one_module_class_each_keep_a_frozen_graph():
    """Dynamo hands the calls of two instances of one module class the same graph (it guards parameters by size):
    the second instance's parameters get a frozen compile of their own instead of sending both to an unfrozen one;
    an in-place change to either still sends every later call to the graph compiled without freezing."""
    from irc import report

    a, b = _instances(2)
    x = convnet()[1]
    ca, cb = compile_irc(a), compile_irc(b)
    start = report.mark()
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(ca(x), a(x), **TOL)
            torch.testing.assert_close(cb(x), b(x), **TOL)
        graphs = report.reports_since(start).graphs
        assert len(graphs) == 2 and graphs[0].freeze is not None and graphs[1].freeze == graphs[0].freeze, graphs
        a[0].weight.add_(0.25)
        torch.testing.assert_close(ca(x), a(x), **TOL)
        torch.testing.assert_close(cb(x), b(x), **TOL)
    unfrozen = report.reports_since(start).graphs[2:]
    assert len(unfrozen) == 1 and unfrozen[0].freeze is None, unfrozen


def test_frozen_variants_are_bounded():
    """Beyond FrozenGraph.VARIANTS parameter sets in the frozen places, the calls run the graph compiled without
    freezing, each with its own parameters."""
    from irc import report
    from irc.frontend.freeze import FrozenGraph

    models = _instances(FrozenGraph.VARIANTS + 1)
    x = convnet()[1]
    compiled = [compile_irc(m) for m in models]
    start = report.mark()
    with torch.no_grad():
        for _ in range(2):
            for c, m in zip(compiled, models):
                torch.testing.assert_close(c(x), m(x), **TOL)
    graphs = report.reports_since(start).graphs
    assert [g.freeze is not None for g in graphs] == [True] * FrozenGraph.VARIANTS + [False], graphs


def test_mutated_buffers_are_not_frozen():
    """BatchNorm in train mode under no_grad updates its running statistics: they stay inputs, and match eager."""
    model, x = convnet()
    model.train()
    ref = copy.deepcopy(model)
    with torch.no_grad():
        torch.testing.assert_close(compile_irc(model)(x), ref(x), **TOL)
    torch.testing.assert_close(model[1].running_mean, ref[1].running_mean, **TOL)
    torch.testing.assert_close(model[4].running_var, ref[4].running_var, **TOL)


def test_freeze_option_values():
    assert Options.resolve(options={"freeze": "auto"}).freeze is None
    assert Options.resolve(options={"freeze": False}).freeze is False
    with pytest.raises(ValueError, match="freeze"):
        Options.resolve(options={"freeze": "yes"})
