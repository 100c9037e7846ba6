"""irc-opt: what it prints for good input, and for malformed input a located diagnostic, exit code 1, no traceback."""

import io
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType, i32
from xdsl.passes import ModulePass

import irc.lowering
from irc.tools.opt import main

GOOD = textwrap.dedent(
    """\
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %s = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %t = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %dead = tn.neg %a : tensor<4xf32>
      %r = tn.mul %s, %t : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    """
)
# GOOD with an op the verifier rejects (line 2, column 3), used nowhere, so parsing succeeds
BAD_VERIFY = GOOD.replace("{\n", "{\n  %bad = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>\n", 1)
LOCATED = re.compile(r"^(\S+):(\d+):(\d+): error: ", re.M)


def run(capsys, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        old, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        code = main(list(argv))
    finally:
        if stdin is not None:
            sys.stdin = old
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, out, err


def write(tmp_path: Path, text: str, name: str = "input.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def location(err: str) -> tuple[str, int, int]:
    m = LOCATED.search(err)
    assert m, f"no file:line:col: error: in {err!r}"
    return m[1], int(m[2]), int(m[3])


# -- good input ---------------------------------------------------------------------------------


def test_prints_the_tensor_stage_unchanged(capsys, tmp_path):
    code, out, err = run(capsys, write(tmp_path, GOOD))
    assert code == 0 and not err
    assert "%dead = tn.neg" in out and out.count("tn.add") == 2


def test_stage_tensor_opt_runs_the_stage_passes(capsys, tmp_path):
    code, out, _ = run(capsys, "--stage", "tensor-opt", write(tmp_path, GOOD))
    assert code == 0
    assert "tn.neg" not in out and out.count("tn.add") == 1  # dce and cse ran


def test_stdin_and_dash(capsys):
    for argv in ([], ["-"]):
        code, out, _ = run(capsys, *argv, stdin=GOOD)
        assert code == 0 and "tn.mul" in out


def test_output_parses_back_to_itself(capsys, tmp_path):
    _, first, _ = run(capsys, write(tmp_path, GOOD))
    _, generic, _ = run(capsys, "--print-op-generic", stdin=first)
    _, second, _ = run(capsys, stdin=generic)
    assert '"tn.add"' in generic and second == first


def test_passes_by_name(capsys, tmp_path):
    code, out, _ = run(capsys, "-p", "dce", write(tmp_path, GOOD))
    assert code == 0 and "tn.neg" not in out and out.count("tn.add") == 2


def test_help_lists_stages_passes_and_examples(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "--stage" in out and "tensor-opt" in out and "--model" in out and "examples:" in out


# -- malformed input: file:line:col, exit 1, no traceback ---------------------------------------


def test_truncated_file(capsys, tmp_path):
    path = write(tmp_path, "\n".join(GOOD.splitlines()[:3]) + "\n")
    code, out, err = run(capsys, path)
    assert code == 1 and not out
    assert location(err)[:2] == (path, 3) and "unexpected end of input" in err


def test_truncated_mid_type(capsys, tmp_path):
    code, _, err = run(capsys, write(tmp_path, GOOD[: GOOD.index("tensor<4xf32> -> tensor<4xf32>\n  %t")]))
    assert code == 1 and location(err)[1] == 2


def test_unknown_op(capsys, tmp_path):
    path = write(tmp_path, GOOD.replace("tn.neg", "tn.frobnicate"))
    code, _, err = run(capsys, path)
    assert code == 1
    assert location(err) == (path, 4, 11) and "tn.frobnicate is not registered" in err


def test_verifier_type_mismatch(capsys, tmp_path):
    path = write(tmp_path, BAD_VERIFY)
    code, _, err = run(capsys, path)
    assert code == 1
    assert location(err) == (path, 2, 3) and "tn.add: result element type i32 is wrong" in err
    assert "^^^" in err  # the source line, underlined


def test_operand_type_mismatch(capsys, tmp_path):
    path = write(tmp_path, GOOD.replace("%dead = tn.neg %a : tensor<4xf32>", "%dead = tn.neg %a : tensor<8xf32>"))
    code, _, err = run(capsys, path)
    assert code == 1 and location(err)[:2] == (path, 4) and "tensor<8xf32>" in err


def test_error_in_a_later_split_chunk_has_its_file_line(capsys, tmp_path):
    path = write(tmp_path, GOOD + "// -----\n" + BAD_VERIFY)
    code, _, err = run(capsys, "--split-input-file", path)
    assert code == 1 and location(err) == (path, len(GOOD.splitlines()) + 3, 3)


def test_verify_diagnostics_checks_expected_errors(capsys, tmp_path):
    unexpected = write(
        tmp_path, BAD_VERIFY + "// -----\n// expected-error @+1 {{is not registered}}\n%x = tn.frobnicate\n"
    )
    code, out, err = run(capsys, "--split-input-file", "--verify-diagnostics", unexpected)
    assert code == 1 and location(err) == (unexpected, 2, 3) and "unexpected error: tn.add: result element type" in err
    expected = write(
        tmp_path, "// expected-error @+2 {{result element type i32 is wrong}}\n" + BAD_VERIFY, "expected.mlir"
    )
    assert run(capsys, "--verify-diagnostics", expected)[:2] == (0, "")
    missing = write(tmp_path, "// expected-error @+1 {{no such error}}\n" + GOOD, "missing.mlir")
    code, out, err = run(capsys, "--verify-diagnostics", missing)
    assert code == 1 and location(err) == (missing, 1, 4) and 'expected error "no such error" was not produced' in err
    assert "func.func @f" in out  # a case without errors still prints its IR


def test_verify_diagnostics_without_expectations_prints_errors_as_xdsl_does(capsys, tmp_path):
    path = write(tmp_path, BAD_VERIFY)
    code, out, _ = run(capsys, "--verify-diagnostics", path)
    assert code == 0 and location(out) == (path, 2, 3)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--stage", "bogus"], ["--stage", "invalid choice", "'bogus'"]),
        (["--bogus-flag"], ["unrecognized arguments", "--bogus-flag"]),
        (["--stage", "fx"], ["--stage fx needs --model"]),
        (["--inputs", "4xf32"], ["need --model"]),
        (["--stage", "tensor", "--from-stage", "tensor-opt"], ["comes before"]),
    ],
)
def test_bad_command_line(capsys, tmp_path, argv, words):
    code, out, err = run(capsys, *argv, write(tmp_path, GOOD))
    assert code == 1 and not out
    assert err.startswith("irc-opt: error: ") and all(w in err for w in words), err


def test_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, str(tmp_path / "nope.mlir"))
    assert code == 1 and "nope.mlir" in err and "No such file" in err


def test_empty_input(capsys):
    code, _, err = run(capsys, stdin="")
    assert code == 1 and "stdin:1:1: error:" in err


# -- passes that break the IR or crash ---------------------------------------------------------


@dataclass(frozen=True)
class BreakResultTypes(ModulePass):
    name = "test-break-types"

    def apply(self, ctx, op):
        for f in op.walk():
            if isinstance(f, func.FuncOp):  # declare a result type that func.return no longer matches
                f.function_type = FunctionType.from_lists(f.function_type.inputs, [TensorType(i32, [4])])


@dataclass(frozen=True)
class Crash(ModulePass):
    name = "test-crash"

    def apply(self, ctx, op):
        raise RuntimeError("boom")


def test_a_pass_that_leaves_invalid_ir_is_named(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(irc.lowering.PASSES, BreakResultTypes.name, BreakResultTypes())
    code, out, err = run(capsys, "-p", "test-break-types", write(tmp_path, GOOD))
    assert code == 1 and not out
    assert location(err)[1] == 6 and "func.return" in err  # still at the op's source line
    assert "note: the IR verified before pass 'test-break-types'" in err


def test_a_pass_that_crashes_is_named(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(irc.lowering.PASSES, Crash.name, Crash())
    code, _, err = run(capsys, "-p", "dce,test-crash", write(tmp_path, GOOD))
    assert code == 1 and "internal error in pass 'test-crash': RuntimeError: boom" in err


# -- --model errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--model", "no_such_module_xyz:f", "--inputs", "4xf32"], ["cannot import", "no_such_module_xyz"]),
        (["--model", "irc.tools.examples.mlp:nothing", "--inputs", "4xf32"], ["no attribute 'nothing'"]),
        (["--model", "irc.tools.examples.mlp:gelu_residual", "--inputs", "4xfloat"], ["--inputs 4xfloat"]),
        (["--model", "irc.tools.examples.mlp:gelu_residual", "--inputs", "?x4xf32"], ["--inputs ?x4xf32"]),
        (["--model", "irc.tools.examples.mlp:make_mlp", "--inputs", "4x7xf32"], ["make_mlp", "failed"]),
    ],
)
def test_bad_model_request(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 1 and err.startswith("irc-opt: error: ") and all(w in err for w in words), err


def test_model_from_a_file(capsys, tmp_path):
    path = write(tmp_path, "import torch\n\ndef build():\n    return lambda x: torch.tanh(x) * 2\n", "my_model.py")
    code, out, _ = run(capsys, "--model", f"{path}:build", "--inputs", "3x5xf32", "--stage", "tensor-opt")
    assert code == 0
    assert out.startswith(f"// irc-opt --model {path}:build --inputs 3x5xf32 --stage tensor-opt\n// graph ")
    assert "tn.tanh" in out and "tn.mul" in out and "tensor<3x5xf32>" in out


def _backend_stages(fn, x, tmp_path) -> dict[str, str]:
    """The stage dumps of the one graph the backend compiles for fn(x) with default options."""
    import torch

    import irc

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(fn, backend=irc.backend, options={"dump_dir": str(tmp_path / "dump")})(x)
    (folder,) = (tmp_path / "dump").iterdir()
    return {
        f.stem.split("-", 1)[1]: f.read_text() for f in folder.iterdir() if f.name != "call.py"
    }  # call.py: no stage


def _body(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("//"))


def test_model_prints_what_the_backend_compiled(capsys, tmp_path):
    """One driver: irc-opt --model --stage mem prints the backend's mem stage, and the backend's tensor-opt
    stage run through irc-opt --stage mem gives that same mem stage (same passes for the same options)."""
    import torch

    path = write(
        tmp_path, "import torch\n\ndef build():\n    return lambda x: torch.softmax(x @ x.t(), -1).sum(0) * 2\n", "m.py"
    )
    stages = _backend_stages(lambda x: torch.softmax(x @ x.t(), -1).sum(0) * 2, torch.randn(6, 5), tmp_path)
    code, out, _ = run(capsys, "--model", f"{path}:build", "--inputs", "6x5xf32", "--stage", "mem")
    assert code == 0 and _body(out).strip() == stages["mem"].strip()
    code, out, _ = run(capsys, "--stage", "mem", write(tmp_path, stages["tensor-opt"], "tensor-opt.mlir"))
    assert code == 0 and out.strip() == stages["mem"].strip()


# -- the installed console script --------------------------------------------------------------


def test_console_script_exit_code_and_no_traceback(tmp_path):
    script = Path(sys.executable).with_name("irc-opt")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "irc.tools.opt"]
    path = write(tmp_path, GOOD.replace("tn.neg", "tn.frobnicate"))
    proc = subprocess.run([*cmd, path], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{path}:4:11: error: Operation tn.frobnicate is not registered" in proc.stderr
