"""--verify-each finds an injected wrong rewrite, names it, and writes a reproducer that replays the failure; the backend's `verify` option does the same check."""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from xdsl.passes import ModulePass

import irc
import irc.lowering
from irc import report
from irc.lowering.pipeline import LOOP, TENSOR_OPT, Plan

from .test_irc_opt import run, write

PROGRAM = """\
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = tn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %e = tn.exp %s : tensor<4x8xf32>
  %m = tn.mul %e, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = tn.sum %m dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
"""

DYNAMIC = """\
func.func @main(%n: index, %x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %i: tensor<?x8xi64>) -> (tensor<?x1xf32>, tensor<?x8xi64>) {
  %d = tn.div %x, %y : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  %t = tn.tanh %d : tensor<?x8xf32>
  %s = tn.sum %t dims = [1] : tensor<?x8xf32> -> tensor<?x1xf32>
  %j = tn.mul %i, %i : tensor<?x8xi64>, tensor<?x8xi64> -> tensor<?x8xi64>
  func.return %s, %j : tensor<?x1xf32>, tensor<?x8xi64>
}
"""


@dataclass(frozen=True)
class FlipSubOperands(ModulePass):
    """The injected bug: a 'simplification' that swaps the operands of arith.subf (valid IR, wrong meaning)."""

    name = "test-flip-subf"

    def apply(self, ctx, module):
        for op in list(module.walk()):
            if op.name == "arith.subf":
                op.operands = tuple(reversed(op.operands))


@pytest.fixture
def wrong_loop_stage(monkeypatch):
    """The loop stage with the wrong rewrite in the middle of its passes, registered as an irc pass."""
    loop = irc.lowering.STAGES["loop"]
    monkeypatch.setitem(irc.lowering.PASSES, FlipSubOperands.name, FlipSubOperands())
    monkeypatch.setitem(irc.lowering.STAGES, "loop", (*loop[:2], FlipSubOperands(), *loop[2:]))


def test_verify_each_names_the_wrong_pass_and_the_reproducer_replays(capsys, tmp_path, wrong_loop_stage):
    repro = tmp_path / "repro.mlir"
    code, out, err = run(
        capsys, "--stage", "mem", "--verify-each", "--seed", "7", "--reproducer", str(repro), write(tmp_path, PROGRAM)
    )
    assert code == 1 and not out
    assert "irc-opt: error: --verify-each: pass 'test-flip-subf' changed the result of @main: result 0 at [" in err
    assert "(run in f64)" in err and f"replay with: irc-opt --run-reproducer {repro}" in err
    text = repro.read_text()
    assert "// pass: test-flip-subf\n// seed: 7\n" in text
    assert "loop.nest" in text and "arith.subf" in text and "tn.sub" not in text  # the IR right before that pass

    code, out, err = run(capsys, "--run-reproducer", str(repro))
    assert code == 1 and "irc-opt: error: reproduced: pass 'test-flip-subf' changed the result of @main" in err
    first = re.search(r"result 0 at .*", text)[0]
    assert first in err  # same seed, same inputs, same numbers


def test_the_reproducer_is_an_ordinary_input(capsys, tmp_path, wrong_loop_stage):
    repro = tmp_path / "repro.mlir"
    run(capsys, "--stage", "loop", "--verify-each", "--reproducer", str(repro), write(tmp_path, PROGRAM))
    code, out, _ = run(capsys, "--stage", "mem", str(repro))  # detected as loop-stage input
    assert code == 0 and "mem.launch @kernel0" in out


def test_a_replay_that_no_longer_fails_exits_zero(capsys, tmp_path, monkeypatch, wrong_loop_stage):
    repro = tmp_path / "repro.mlir"
    run(capsys, "--stage", "loop", "--verify-each", "--reproducer", str(repro), write(tmp_path, PROGRAM))
    monkeypatch.setattr(FlipSubOperands, "apply", lambda self, ctx, module: None)  # the bug is fixed
    code, out, err = run(capsys, "--run-reproducer", str(repro))
    assert code == 0 and "the reproducer did not fail: pass 'test-flip-subf' keeps the result (seed 0)" in err
    assert "loop.nest" in out


_LOOP = Plan().stage_passes("loop")  # split-addmm before LOOP's passes where the target leaves it to run
_FIRST_PASSES = [p.name for p in (*TENSOR_OPT, *_LOOP[: _LOOP.index(LOOP[0]) + 1])]  # tensor stage to tensor-to-loop


def test_the_default_reproducer_goes_to_the_dump_dir(capsys, tmp_path, wrong_loop_stage):
    dumps = tmp_path / "dumps"
    code, _, err = run(capsys, "--stage", "loop", "--verify-each", "--dump-dir", str(dumps), write(tmp_path, PROGRAM))
    assert code == 1 and (dumps / "reproducer.mlir").exists()
    expected = ["00-input.mlir", *(f"{i:02d}-{name}.mlir" for i, name in enumerate(_FIRST_PASSES, 1))]
    assert sorted(p.name for p in dumps.iterdir())[: len(expected)] == expected


@pytest.mark.parametrize("program", [PROGRAM, DYNAMIC], ids=["static", "dynamic"])
def test_the_real_pipeline_keeps_the_result(capsys, tmp_path, program):
    for seed in ("0", "3"):
        code, out, err = run(
            capsys,
            "--stage",
            "mem",
            "--verify-each",
            "--seed",
            seed,
            "--reproducer",
            str(tmp_path / "r.mlir"),
            write(tmp_path, program),
        )
        assert code == 0 and not err and "func.func @main" in out, err


def test_a_program_that_does_not_run_is_noted_not_failed(capsys, tmp_path):
    # reshape ? x 8 into 5 x 8: only one size makes sense, and the random one is not it
    bad = (
        "func.func @main(%x: tensor<?x8xf32>) -> tensor<5x8xf32> {\n"
        "  %r = tn.reshape %x : tensor<?x8xf32> -> tensor<5x8xf32>\n"
        "  %e = tn.exp %r : tensor<5x8xf32>\n"
        "  func.return %e : tensor<5x8xf32>\n}\n"
    )
    code, out, err = run(
        capsys,
        "--stage",
        "loop",
        "--verify-each",
        "--seed",
        "1",
        "--reproducer",
        str(tmp_path / "r.mlir"),
        write(tmp_path, bad),
    )
    assert code == 0 and "loop.nest" in out
    # the passes that leave the program as it was need no run; the two that change it could not be checked
    assert "irc-opt: note: --verify-each did not check @main around tensor-to-loop, fuse-loops:" in err
    assert "it does not run on random inputs (RuntimeError: shape '[5, 8]' is invalid for input of size 48)" in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--run-reproducer", "{repro}", "-p", "cse"], ["--run-reproducer FILE replays the pass its file names"]),
        (["--run-reproducer", "{bogus}"], ["not an irc-opt reproducer"]),
        (["--run-reproducer", "{missing}"], ["cannot read", "missing.mlir"]),
    ],
)
def test_bad_replays(capsys, tmp_path, argv, words):
    paths = {
        "repro": str(tmp_path / "repro.mlir"),
        "bogus": write(tmp_path, PROGRAM, "bogus.mlir"),
        "missing": str(tmp_path / "missing.mlir"),
    }
    Path(paths["repro"]).write_text("// pass: cse\n// seed: 0\n" + PROGRAM)
    code, out, err = run(capsys, *[a.format(**paths) for a in argv])
    assert code == 1 and not out and all(w in err for w in words), err


# -- the backend: torch.compile(..., options={"verify": True}) ----------------------------------------


def _compile(fn, *args, **options):
    torch._dynamo.reset()
    start = report.mark()
    out = torch.compile(fn, backend=irc.backend, options={"verify": True, **options})(*args)
    return out, report.reports_since(start).graphs


def f(x, y):
    return torch.exp(x - y).sum(-1) * x[:, 0]


def test_backend_verify_passes_a_correct_pipeline():
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    out, graphs = _compile(f, x, y)
    torch.testing.assert_close(out, f(x, y))
    assert graphs and all(g.verify_failure is None and g.eager_graph is None for g in graphs)


def test_backend_verify_reports_the_wrong_pass(monkeypatch):
    from irc.lowering import pipeline
    from irc.tools.test_passes import SwapOperandsPass

    monkeypatch.setitem(pipeline.STAGES, "tensor-opt", (*pipeline.TENSOR_OPT, SwapOperandsPass()))
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    out, graphs = _compile(f, x, y)
    torch.testing.assert_close(out, f(x, y))  # the graph ran eagerly: right answers
    (g,) = graphs
    assert g.verify_failure.startswith("pass 'test-swap-operands' changed the result of @main")
    assert g.eager_graph is not None and "verify: pass 'test-swap-operands'" in str(g)
    with pytest.raises(Exception, match="test-swap-operands"):
        _compile(f, x, y, strict=True)


def test_backend_verify_with_dynamic_shapes():
    x, y = torch.randn(6, 8), torch.randn(6, 8)
    torch._dynamo.reset()
    start = report.mark()
    fn = torch.compile(f, backend=irc.backend, dynamic=True, options={"verify": True, "strict": True})
    torch.testing.assert_close(fn(x, y), f(x, y))
    assert all(g.verify_failure is None for g in report.reports_since(start).graphs)


def test_verify_option_must_be_a_bool():
    from irc.options import Options

    assert Options.resolve(options={"verify": True}).verify
    with pytest.raises(ValueError, match="'verify' must be a bool"):
        Options.resolve(options={"verify": "yes"})
