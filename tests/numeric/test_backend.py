"""The backend's contract with Dynamo and AOT autograd: mutation, aliasing, graph breaks, fallbacks, dumps, report."""

import os

import torch

import irc
from tests.conftest import compile_irc


def test_in_place_mutation_of_an_input_matches_eager():
    def fn(x, y):
        x.add_(1)
        y.mul_(2)
        return x * y

    x, y = torch.randn(5, 3), torch.randn(3)
    xe, ye = x.clone(), y.clone()
    out = compile_irc(fn)(x, y)
    torch.testing.assert_close(out, fn(xe, ye))
    torch.testing.assert_close(x, xe)
    torch.testing.assert_close(y, ye)


def test_graph_break_on_tensor_value_control_flow():
    def fn(x):
        y = x.cos()
        if y.sum() > 0:
            return y + 1
        return y - 1

    c = compile_irc(fn)
    for sign in (1, -1):
        x = torch.full((4, 4), sign * 0.1) + torch.pi / 2 * (sign < 0) * 2
        torch.testing.assert_close(c(x), fn(x))


def test_unsupported_op_becomes_an_eager_fallback_with_its_reason():
    fn = lambda r, theta: torch.view_as_real(torch.polar(r, theta)) * 2  # noqa: E731  (complex numbers: no importer)
    r, theta = torch.rand(6, 9), torch.randn(6, 9)
    rep = irc.explain(fn, r, theta, options={"strict": True})
    assert any(target == "aten::polar.default" for target, _ in rep.fallbacks), str(rep)
    assert not rep.native
    torch.testing.assert_close(compile_irc(fn)(r, theta), fn(r, theta))


def test_dump_dir_writes_each_stage_and_the_call(tmp_path):
    fn = lambda x: x.exp() + 1  # noqa: E731
    compile_irc(fn, dump_dir=str(tmp_path))(torch.randn(3))
    (graph,) = list(tmp_path.iterdir())
    assert "def call(args):" in (graph / "call.py").read_text()  # the cpu target's call, as Python
    names = sorted(n for n in os.listdir(graph) if n != "call.py")
    from irc.lowering.pipeline import STAGE_ORDER

    stages = [n.split("-", 1)[1].rsplit(".", 1)[0] for n in names]
    assert stages == list(STAGE_ORDER[: len(stages)]) and len(stages) >= 3
    assert "tn.exp" in (graph / names[1]).read_text()


def test_explain_reports_imports_and_stage_times(tmp_path, monkeypatch):
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))  # a cold compile: another test may have cached this graph
    rep = irc.explain(lambda x: x.sin().sum(), torch.randn(4))
    (g,) = rep.graphs
    assert g.kind == "inference" and g.native
    assert g.imported["aten::sin.default"] == 1
    assert set(g.stage_seconds) >= {"tensor", "tensor-opt"}
    assert "imported 2 aten calls" in str(rep)


def test_symint_inputs_are_index_arguments_and_ints_at_run_time():
    fn = lambda x: x.reshape(x.shape[0] * 2, -1) + x.shape[1]  # noqa: E731
    c = compile_irc(fn, dynamic=True)
    for n, m in ((2, 6), (3, 10), (7, 4)):
        x = torch.randn(n, m)
        torch.testing.assert_close(c(x), fn(x))


def test_training_step_through_fallbacks_keeps_gradients():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ref = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ref.load_state_dict(model.state_dict())
    x = torch.randn(8, 16)
    compile_irc(model)(x).pow(2).mean().backward()
    ref(x).pow(2).mean().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_internal_error_runs_graph_eagerly_unless_strict(monkeypatch):
    from irc.frontend import fx_import

    def broken(gm, eager_ops=()):
        raise RuntimeError("simulated irc bug")

    monkeypatch.setattr(fx_import, "import_graph", broken)
    monkeypatch.setattr("irc.dynamo.backend.import_graph", broken)
    fn = lambda x: x * 3  # noqa: E731
    x = torch.randn(4)
    rep = irc.explain(fn, x)
    assert "simulated irc bug" in rep.graphs[0].eager_graph
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(fn, backend=irc.backend)(x), fn(x))
    torch._dynamo.reset()
    try:
        compile_irc(fn)(x)
    except Exception as e:  # Dynamo wraps backend errors
        assert "simulated irc bug" in str(e)
    else:
        raise AssertionError("strict mode must raise irc's error")


def test_report_states_fused_kernels_and_planned_peak_bytes():
    fn = lambda x, w: torch.softmax((x @ w) * 2 + 1, -1) @ w  # noqa: E731
    x, w = torch.randn(32, 64), torch.randn(64, 64)
    (g,) = irc.explain(fn, x, w).graphs
    assert g.fused_kernels == 1 and len(g.externs) == 2, str(g)
    assert 0 < g.planned_peak_bytes <= g.intermediate_bytes, str(g)
    assert "fused kernels" in str(g) and "unfused" in str(g)


def test_op_with_data_dependent_output_sizes_runs_the_graph_eagerly():
    fn = lambda w, i, o: torch.nn.functional.embedding_bag(i, w, o, mode="max") * 2  # noqa: E731
    w, i, o = torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 3, 6])
    rep = irc.explain(fn, w, i, o)
    assert any(g.eager_graph and "depend on the data" in g.eager_graph for g in rep.graphs), str(rep)
    torch.testing.assert_close(compile_irc(fn)(w, i, o), fn(w, i, o))


def test_math_on_a_symbolic_size_is_imported():
    """`x.sum(-1) / math.sqrt(x.shape[-1])` under dynamic shapes: Dynamo computes the root in f64 tensors through
    prims.convert_element_type, which ran eagerly (through the reference semantics, 3.6x slower per call)."""
    import math

    def fn(x):
        return x.sum(-1) / math.sqrt(x.shape[-1])

    mark = irc.report.mark()
    f = compile_irc(fn, dynamic=True)
    for n in (5, 13, 1):
        x = torch.randn(3, n)
        torch.testing.assert_close(f(x), fn(x))
    graphs = irc.report.reports_since(mark).graphs
    assert graphs and all(g.native for g in graphs), str(irc.report.reports_since(mark))
    assert any(op.startswith("prims::convert_element_type") for g in graphs for op in g.imported), str(graphs[0])
