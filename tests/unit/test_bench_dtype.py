"""bench/compare.py --dtype (issue 52 item 5): the report of a bf16 autocast run, its goals, the child processes
given the dtype, and a training step whose forward and loss run under autocast."""

import json
import subprocess

import torch

from irc.bench import compare
from irc.bench.cases import CASES
from irc.bench.report import goals, markdown

META = {
    "torch": "2.13.0",
    "threads": 2,
    "cpus": 2,
    "copy_gbps": 10.0,
    "mm_gflops": 50.0,
    "mm_gflops_dtype": 160.0,
    "load_before": (0.5, 0.5, 0.5),
    "started": "2026-12-06 12:00:00",
    "dtype": "bf16",
}


def _row(eager, inductor, irc, ratio):
    return {
        "eager": {"steady_s": eager, "bytes": 1 << 20, "ref_error": 1e-3, "lowp_ops": [9, 9]},
        "inductor": {"steady_s": inductor, "max_error": 0.0, "ref_error": 1e-3, "err_ratio": 1.0},
        "irc": {"steady_s": irc, "max_error": 1e-4, "ref_error": ratio * 1e-3, "err_ratio": ratio},
    }


def _results():
    results = {"mlp-b32": _row(0.010, 0.008, 0.004, 1.2), "resnet18": _row(0.2, 0.1, 0.1, 2.0)}
    results["train-mlp-b32"] = _row(0.030, 0.025, 0.020, 1.0)
    results["row-sum"] = {
        "eager": {"steady_s": 0.008, "bytes": 1 << 26, "lowp_ops": [0, 1]},  # autocast lowers nothing: no errors
        "inductor": {"steady_s": 0.01, "max_error": 0.0},
        "irc": {"steady_s": 0.008, "max_error": 0.0},
    }
    for name in results:
        for b in CASES[name].backends[3:]:  # irc's variants: timed, no error figures
            results[name][b] = {"steady_s": 0.005}
    return results


def test_a_bf16_run_renders_its_dtype_the_errors_against_float64_and_the_issue_goals():
    md = markdown(_results(), META)
    assert md.startswith("# irc vs eager vs inductor, bf16 autocast\n")
    assert "1024^3 torch.mm 50 GFLOP/s (bf16 160)" in md and 'torch.autocast("cpu", bfloat16)' in md
    header = next(line for line in md.splitlines() if line.startswith("| case |"))
    assert header.endswith("| err vs f64 | err / eager err | bf16 ops |") and "max err" not in header
    assert "| mlp-b32 | eager |" in md and "| 1.0e-03 | - | 9 of 9 |" in md
    assert "| mlp-b32 | irc | - | - | 4.00 ms | - | 2.50x | 2.00x | - | - | - | 1.2e-03 | 1.20x | - |" in md
    assert "| row-sum | irc |" in md and "| 0 of 1 |" in md
    widths = {line.count("|") for line in md.splitlines() if line.startswith("| ") and "|---" not in line}
    assert widths == {header.count("|")}  # every row as wide as the header
    text = "\n".join(goals(_results(), META))
    geomeans = "models, geomean speed vs eager-bf16 over 2: irc 2.24x, inductor 1.58x"
    assert f"{geomeans} (goal: irc >= 1.6x and >= inductor's: met)" in text
    assert "training steps, geomean speed vs eager under autocast over 1: irc 1.50x" in text
    assert "<= 1.5x eager-bf16's own: 2 of 3 cases (above: resnet18 2.00x)" in text
    assert "bandwidth chain" not in text  # the float32 goals are not a bf16 run's


def test_a_float32_run_keeps_its_table():
    meta = {k: v for k, v in META.items() if k not in ("dtype", "mm_gflops_dtype")}
    md = markdown({"mlp-b32": _row(0.010, 0.008, 0.004, 1.2)}, meta)
    assert md.startswith("# irc vs eager vs inductor\n") and "autocast" not in md
    assert "| GB/s (% copy) | max err |\n" in md and "| 1.0e-04 |\n" in md


def test_first_call_processes_get_the_dtype(tmp_path, monkeypatch):
    cmds = []

    def run(cmd, **kw):
        cmds.append(cmd)
        out = {"first_call_s": 1.0, "build_s": 0.1, "first_peak_mb": 1.0, "peak_mb": 1.0}
        return subprocess.CompletedProcess(cmd, 0, json.dumps(out), "")

    monkeypatch.setattr(compare.subprocess, "run", run)
    out = compare.first_calls(CASES["mlp-b32"], "irc", tmp_path, 10.0, "bf16")
    assert set(out) == {"cold", "warm"} and all(c[-2:] == ["--dtype", "bf16"] for c in cmds) and len(cmds) == 2


def test_a_bf16_train_step_lowers_its_forward_and_its_reference_runs_in_float64():
    case = CASES["train-mlp-b32"]
    with compare.grad_mode(case):
        step, inputs = compare.build(case, "eager", torch.bfloat16)
        low, total = compare.lowp_ops(step, inputs, torch.bfloat16)
        loss = step()
    assert 0 < low < total and loss.dtype == torch.float32  # cross-entropy upcasts; the SGD step stays float32
    assert all(p.dtype == torch.float32 for p in step.model.parameters())
    ref = compare.reference(case)
    assert ref.dtype == torch.float64 and abs(ref.item() - loss.item()) < 0.05
