"""Options are validated up front with messages that name the valid choices; irc is a registered backend."""

import dataclasses
from pathlib import Path

import pytest
import torch

import irc
from irc.options import MODES, TARGETS, Options

VALID_OPTIONS = [f.name for f in dataclasses.fields(Options) if f.name != "mode"]


def test_defaults():
    opts = Options.resolve()
    assert opts.mode == "default" and opts.target in TARGETS
    assert Options.resolve(None, None) == Options.resolve("default", {})


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_resolves(mode):
    assert Options.resolve(mode).mode == mode


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_resolves(target):
    assert Options.resolve(options={"target": target}).target == target


def test_unknown_option_is_named_with_the_valid_ones():
    with pytest.raises(ValueError) as e:
        Options.resolve(options={"bogus": 1})
    msg = str(e.value)
    assert "'bogus'" in msg
    assert all(name in msg for name in VALID_OPTIONS), msg


def test_several_unknown_options_are_all_named():
    with pytest.raises(ValueError, match="'also_bogus', 'bogus'"):
        Options.resolve(options={"bogus": 1, "also_bogus": 2, "strict": True})


def test_bad_mode_lists_the_modes():
    with pytest.raises(ValueError) as e:
        Options.resolve("fastest")
    assert "'fastest'" in str(e.value) and all(m in str(e.value) for m in MODES)


def test_bad_target_lists_the_targets():
    with pytest.raises(ValueError) as e:
        Options.resolve(options={"target": "tpu"})
    assert "'tpu'" in str(e.value) and all(t in str(e.value) for t in TARGETS)


def test_bad_option_types():
    with pytest.raises(ValueError, match="strict"):
        Options.resolve(options={"strict": "yes"})
    with pytest.raises(ValueError, match="dump_dir"):
        Options.resolve(options={"dump_dir": 3})


def test_torch_compile_with_an_unknown_option_raises_when_called():
    compiled = torch.compile(lambda x: x + 1, backend=irc.backend, options={"bogus": 1})
    with pytest.raises(Exception, match="unknown option.*'bogus'.*valid options"):
        compiled(torch.randn(3))


def test_torch_compile_with_a_bad_mode_raises_when_called():
    compiled = torch.compile(lambda x: x + 1, backend=irc.backend, mode="fastest")
    with pytest.raises(Exception, match="unknown mode 'fastest'"):
        compiled(torch.randn(3))


def test_irc_is_a_registered_dynamo_backend():
    assert "irc" in torch.compiler.list_backends()


def test_compile_by_backend_name_matches_eager():
    fn = lambda x, y: torch.relu(x * y + 1).sum(0)  # noqa: E731
    x, y = torch.randn(5, 7), torch.randn(7)
    start = irc.report.mark()
    torch.testing.assert_close(torch.compile(fn, backend="irc")(x, y), fn(x, y))
    assert irc.report.reports_since(start).graphs, "backend='irc' did not reach irc"


@pytest.mark.parametrize(
    "mode, options, suggestion",
    [
        ("max-autotun", {}, "did you mean 'max-autotune'"),
        (None, {"stirct": True}, "did you mean 'strict'"),
        (None, {"target": "cpus"}, "did you mean 'cpu'"),
        (None, {"layout": "nwhc"}, "did you mean 'nhwc'"),
        (None, {"matmul": "loop"}, "did you mean 'loops'"),
    ],
)
def test_a_misspelling_gets_a_suggestion(mode, options, suggestion):
    with pytest.raises(ValueError, match=suggestion):
        Options.resolve(mode, options)


def test_dump_dir_takes_a_pathlib_path(tmp_path):
    assert Options.resolve(options={"dump_dir": tmp_path / "d"}).dump_dir == str(tmp_path / "d")


def test_inductors_max_autotune_no_cudagraphs_is_max_autotune():
    assert Options.resolve("max-autotune-no-cudagraphs").mode == "max-autotune"
    assert Options.resolve(options={"mode": "max-autotune-no-cudagraphs"}).mode == "max-autotune"


def test_mode_and_options_mode_must_agree():
    assert Options.resolve("reduce-overhead", {"mode": "reduce-overhead"}).mode == "reduce-overhead"
    with pytest.raises(ValueError, match="disagree"):
        Options.resolve("reduce-overhead", {"mode": "max-autotune"})


def test_explain_takes_mode_and_options_together():
    report = irc.explain(lambda x: x.cos() * 2, torch.randn(8), mode="reduce-overhead", options={"attention": False})
    assert report.graphs and all(g.mode == "reduce-overhead" for g in report.graphs), report


def test_irc_cpu_strict_is_the_default_of_strict(monkeypatch):
    monkeypatch.setenv("IRC_CPU_STRICT", "1")
    assert Options.resolve().strict is True
    assert Options.resolve(options={"strict": False}).strict is False
    monkeypatch.setenv("IRC_CPU_STRICT", "0")
    assert Options.resolve().strict is False


def test_irc_dump_dir_turns_dumps_on_for_an_unmodified_program(tmp_path, monkeypatch):
    monkeypatch.setenv("IRC_DUMP_DIR", str(tmp_path))
    report = irc.explain(lambda x: x.exp() + 1, torch.randn(4))
    folder = Path(report.graphs[0].dump_dir)
    assert folder.parent == tmp_path and (folder / "00-fx.py").is_file() and (folder / "01-tensor.mlir").is_file()
    assert Options.resolve(options={"dump_dir": None}).dump_dir is None  # the option still wins


def test_torch_compile_debug_dumps_beside_torchs_debug_output(tmp_path, monkeypatch):
    monkeypatch.delenv("IRC_DUMP_DIR", raising=False)
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "1")
    monkeypatch.setattr(torch._dynamo.config, "debug_dir_root", str(tmp_path))
    dump_dir = Path(Options.resolve().dump_dir)
    assert dump_dir.name == "irc" and dump_dir.parent.parent == tmp_path and dump_dir.parent.name.startswith("run_")
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "0")
    assert Options.resolve().dump_dir is None


def _mm_relu(a, b):
    return torch.relu(a @ b) + 1


@pytest.mark.parametrize("name", ["aten.mm", "aten::mm.default", "mm", torch.ops.aten.mm])
def test_eager_ops_run_the_named_op_eagerly_with_the_reason(name):
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    report = irc.explain(_mm_relu, a, b, options={"eager_ops": [name], "strict": True})
    assert ("aten::mm.default", "named in options['eager_ops']") in report.fallbacks, report
    assert "aten::relu.default" in report.graphs[0].imported or "aten::add.Tensor" in report.graphs[0].imported
    torch.testing.assert_close(
        torch.compile(_mm_relu, backend="irc", options={"eager_ops": [name]})(a, b), _mm_relu(a, b)
    )


def test_eager_ops_of_another_overload_leave_the_op_compiled():
    report = irc.explain(_mm_relu, torch.randn(4, 5), torch.randn(5, 3), options={"eager_ops": ["aten.mm.out"]})
    assert not any(target == "aten::mm.default" for target, _ in report.fallbacks), report


@pytest.mark.parametrize(
    "ops, message",
    [
        (["aten.adddmm"], "unknown op 'aten.adddmm' \\(did you mean 'aten::addmm'\\?\\)"),
        (["aten.addmm.defualt"], "no overload 'defualt' \\(did you mean 'default'\\?\\); its overloads: default"),
        ("aten.addmm", "must be a list of aten op names"),
        ([3], "3 is not an op name"),
    ],
)
def test_bad_eager_ops_are_named(ops, message):
    with pytest.raises(ValueError, match=message):
        Options.resolve(options={"eager_ops": ops})
