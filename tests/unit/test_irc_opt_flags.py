"""irc-opt flags beyond the golden tests: located pipeline errors, statistics of rules, dumps of split input, the -t hook, --debug."""

from dataclasses import dataclass

import pytest
from xdsl.passes import ModulePass

import irc.lowering
from irc.lowering import TENSOR_OPT
from irc.ir import apply_rules

from .test_irc_opt import GOOD, LOCATED, run, write
from .test_irc_opt_check import NEGS, fold_neg_neg


@dataclass(frozen=True)
class FoldNegs(ModulePass):
    name = "test-fold-negs"

    def apply(self, ctx, module):
        apply_rules(module, (fold_neg_neg,))


@pytest.mark.parametrize(
    "pipeline, column, words",
    [
        (
            "no-such-pass",
            1,
            ["unknown pass 'no-such-pass'", "note: available passes: " + ", ".join(p.name for p in TENSOR_OPT)],
        ),
        ("cse,dce,nope", 9, ["unknown pass 'nope'"]),
        (
            "fuse-loops{max-body-ops=lots}",
            12,
            ["option 'max-body-ops' of pass 'fuse-loops' expects int, got lots", "note: options of 'fuse-loops'"],
        ),
        ("fuse-loops{sibling=maybe}", 12, ["option 'sibling' of pass 'fuse-loops' expects bool, got maybe"]),
        ("fuse-loops{frobs=1}", 12, ["pass 'fuse-loops' has no option 'frobs'"]),
        ("cse{", 5, ["Expected argument name here"]),
        ("cse;dce", 4, ["Unknown token"]),
        ("builtin.module(cse,func.func(dce))", 20, ["nested pass pipelines are not supported"]),
    ],
)
def test_bad_pipelines_are_located(capsys, tmp_path, pipeline, column, words):
    code, out, err = run(capsys, "-p", pipeline, write(tmp_path, GOOD))
    assert code == 1 and not out
    m = LOCATED.search(err)
    assert m and (m[1], int(m[2]), int(m[3])) == ("<pass-pipeline>", 1, column), err
    assert err.splitlines()[1] == pipeline  # the pipeline, underlined below
    assert all(w in err for w in words), err


def test_statistics_count_rules_by_name(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(irc.lowering.PASSES, FoldNegs.name, FoldNegs())
    code, out, err = run(capsys, "-p", "test-fold-negs", "--statistics", write(tmp_path, NEGS))
    assert code == 0 and out.count("tn.neg") == 0
    assert "'test-fold-negs'\n  (S)      8 ops-before" in err and "  (S)      2 fold_neg_neg - rewrites" in err


def test_dump_dir_with_split_input_has_a_folder_per_case(capsys, tmp_path):
    dumps = tmp_path / "dumps"
    code, _, _ = run(
        capsys,
        "--split-input-file",
        "--stage",
        "tensor-opt",
        "--dump-dir",
        str(dumps),
        write(tmp_path, GOOD + "// -----\n" + GOOD),
    )
    assert code == 0
    assert sorted(str(p.relative_to(dumps)) for p in dumps.rglob("*.mlir")) == [
        f"chunk-{i}/{n}"
        for i in (1, 2)
        for n in ["00-input.mlir"] + [f"{k:02d}-{p.name}.mlir" for k, p in enumerate(TENSOR_OPT, 1)]
    ]


def test_dump_dir_records_a_failing_pass(capsys, tmp_path):
    dumps = tmp_path / "dumps"
    code, _, _ = run(capsys, "-p", "cse,test-break-types", "--dump-dir", str(dumps), write(tmp_path, GOOD))
    assert code == 1
    assert sorted(p.name for p in dumps.iterdir()) == [
        "00-input.mlir",
        "01-cse.mlir",
        "02-test-break-types.failed.mlir",
    ]


def test_emit_hook(capsys, tmp_path, monkeypatch):
    from irc.tools import emit

    monkeypatch.setitem(emit.EMITTERS, "llvm", None)  # a target that does not exist (yet)
    code, _, err = run(capsys, "-t", "llvm", write(tmp_path, GOOD))
    assert code == 1 and "irc-opt: error: target 'llvm' is not available yet" in err
    monkeypatch.setitem(
        emit.EMITTERS, "llvm", lambda module: f"; {sum(1 for _ in module.walk())} ops at the mem stage\n"
    )
    code, out, _ = run(capsys, "-t", "llvm", write(tmp_path, GOOD))
    assert code == 0 and out.endswith("ops at the mem stage\n")
    code, _, err = run(capsys, "-t", "llvm", "--stage", "loop", write(tmp_path, GOOD))
    assert code == 1 and "-t llvm prints code generated from the mem stage, not from --stage loop" in err


def test_debug_shows_the_traceback(capsys, tmp_path, monkeypatch):
    from .test_irc_opt import Crash

    monkeypatch.setitem(irc.lowering.PASSES, Crash.name, Crash())
    code, _, err = run(capsys, "-p", "test-crash", write(tmp_path, GOOD))
    assert code == 1 and "internal error in pass 'test-crash': RuntimeError: boom\n(rerun with --debug" in err
    from irc.tools.opt import main

    with pytest.raises(RuntimeError, match="boom"):
        main(["-p", "test-crash", "--debug", write(tmp_path, GOOD)])


def test_print_ir_goes_to_stderr_and_keeps_stdout_clean(capsys, tmp_path):
    code, out, err = run(
        capsys, "--stage", "tensor-opt", "--print-ir-after-all", "--print-op-generic", write(tmp_path, GOOD)
    )
    assert code == 0 and "IR Dump" not in out and out.startswith('"builtin.module"')
    assert err.count("// -----// IR Dump After") == len(TENSOR_OPT) and '"tn.add"' in err  # printed in the chosen form


def test_list_passes_needs_no_input(capsys):
    code, out, _ = run(capsys, "--list-passes")
    assert code == 0 and "fuse-loops  [loop]" in out and "test-swap-operands" in out
