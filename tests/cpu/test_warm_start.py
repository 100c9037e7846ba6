"""Warm starts (dynamo/warm.py, targets/cpu/runtime/compiled.py's emission record): a graph compiled before, in this
process or another, is not imported, optimised, lowered or emitted again; it loads its cached mem stage and
object code, and computes what eager computes. Graphs that get no record (dynamic sizes) and records whose mem
stage is gone compile as before."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import irc
from irc import cache, report
from irc.dynamo import backend as irc_backend
from irc.dynamo.backend import compile_function
from irc.targets.cpu.runtime import compiled as cpu_compiled

ROOT = Path(__file__).resolve().parents[2]


class Block(torch.nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.lin, self.norm = torch.nn.Linear(d, d), torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(self.lin(x)) + x).softmax(-1)


def _train_step(x, dynamic=False):
    """Gradients of one compiled step (and the reports of its graphs) next to eager's."""
    torch.manual_seed(0)
    model = Block()
    eager = [p.grad for p in _grads(model, model, x)]
    start = report.mark()
    compiled = torch.compile(model, backend=irc.backend, dynamic=dynamic, options={"strict": True})
    got = [p.grad for p in _grads(model, compiled, x)]
    for g, e in zip(got, eager):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    return report.reports_since(start).graphs


def _grads(model, run, x):
    model.zero_grad(set_to_none=True)
    (run(x) * torch.arange(x.shape[-1], dtype=x.dtype)).sum().backward()
    return list(model.parameters())


@pytest.fixture
def cache_dir(tmp_path):
    cache.set_dir(tmp_path / "cache")
    yield tmp_path / "cache"
    cache.set_dir(None)


def test_a_graph_compiled_before_skips_import_lowering_and_emission(cache_dir, monkeypatch):
    x = torch.randn(5, 7, 24)
    cold = _train_step(x)
    assert [g.kind for g in cold] == ["forward", "backward"] and all("tensor" in g.stage_seconds for g in cold)
    torch._dynamo.reset()
    fail = lambda *a, **k: (_ for _ in ()).throw(AssertionError("a warm start imported or emitted"))  # noqa: E731
    monkeypatch.setattr(irc_backend, "import_graph", fail)
    monkeypatch.setattr(cpu_compiled, "emit_kernel", fail)  # an emitter error would send kernels to the reference
    warm = _train_step(x)
    for c, w in zip(cold, warm):
        assert "warm start" in w.stage_seconds and "tensor" not in w.stage_seconds, w.stage_seconds
        assert w.target == "cpu" and not w.target_fallbacks
        assert (w.kernels, w.fused_kernels, w.externs, w.input_writes) == (
            c.kernels,
            c.fused_kernels,
            c.externs,
            c.input_writes,
        )
        assert w.imported == c.imported and w.native


def test_dynamic_graphs_and_missing_mem_stages_compile_as_before(cache_dir):
    x = torch.randn(5, 7, 24)
    _train_step(x, dynamic=True)
    torch._dynamo.reset()
    again = _train_step(x, dynamic=True)
    assert all("tensor" in g.stage_seconds for g in again)  # a symbolic size's meaning is not in its name: no record

    _train_step(x)
    torch._dynamo.reset()
    shutil.rmtree(cache_dir / "mem-ir")  # evicted: the record names a mem stage the cache no longer holds
    rebuilt = _train_step(x)
    assert all("tensor" in g.stage_seconds and "loop+mem" in g.stage_seconds for g in rebuilt)


def test_an_emission_record_loads_the_code_and_still_shows_its_llvm_ir(cache_dir):
    def fn(a, b):
        return (a.sin() * b).sum(-1) + a.exp().mean(-1)

    a, b = torch.randn(13, 33), torch.randn(13, 33)
    first, _ = compile_function(fn, a, b)
    second, _ = compile_function(fn, a, b)
    assert first.compiled._llvm_ir and second.compiled._llvm_ir is None  # loaded through the record: nothing emitted
    assert second.compiled.llvm_ir == first.compiled.llvm_ir  # emitted when asked for
    for run in (first, second):
        torch.testing.assert_close(run([a, b])[0], fn(a, b))


def test_an_emission_record_is_not_taken_for_code_emitted_with_another_prefetch_distance(cache_dir, monkeypatch):
    from irc.targets.cpu.codegen import tuning

    def fn(a):
        return (a * 3).relu() + 1

    monkeypatch.setattr(tuning, "PREFETCH_MIN_BYTES", 0)  # prefetch even this 256 KB buffer
    a = torch.randn(64, 1024)
    first, _ = compile_function(fn, a)
    assert "llvm.prefetch" in first.compiled.llvm_ir
    monkeypatch.setattr(tuning, "PREFETCH", 0)  # IRC_PREFETCH=0 in another process
    second, _ = compile_function(fn, a)
    assert (
        second.compiled._llvm_ir is not None and "llvm.prefetch" not in second.compiled.llvm_ir
    )  # emitted, not loaded
    torch.testing.assert_close(second([a])[0], fn(a))


def test_a_machine_whose_libraries_differ_lowers_afresh(cache_dir, monkeypatch):
    """A cache shared by machines on which a changing weight's products take different libraries (oneDNN where it
    outruns MKL: externs.onednn_outruns_mkl) never hands one machine the other's lowering: the warm record and the
    mem stage are keyed by the target's machine facts, so the other machine imports and lowers again."""
    from irc.targets.cpu.libs import externs

    x = torch.randn(5, 7, 24)
    here = externs.onednn_outruns_mkl()
    _train_step(x)
    torch._dynamo.reset()
    monkeypatch.setattr(externs, "onednn_outruns_mkl", lambda: not here)
    other = _train_step(x)
    assert all("tensor" in g.stage_seconds and "loop+mem" in g.stage_seconds for g in other), [
        g.stage_seconds for g in other
    ]
    torch._dynamo.reset()
    again = _train_step(x)  # the other machine's second start is warm
    assert all("warm start" in g.stage_seconds for g in again)


CHILD = r"""
import json, torch, irc
from irc import report
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
x = torch.randn(8, 16)
compiled = torch.compile(model, backend=irc.backend, options={"strict": True})
compiled(x).square().sum().backward()
got = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
model(x).square().sum().backward()
same = all(torch.allclose(g, p.grad, rtol=1e-4, atol=1e-5) for g, p in zip(got, model.parameters()))
print(json.dumps({"same": same, "stages": [sorted(g.stage_seconds) for g in report.reports_since(0).graphs]}))
"""


def test_a_second_process_starts_warm(tmp_path):
    env = {**os.environ, "IRC_CACHE_DIR": str(tmp_path / "cache"), "IRC_CACHE": "1"}
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, cwd=ROOT.parent, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert all(r["same"] for r in runs)
    assert all("loop+mem" in s for s in runs[0]["stages"]) and len(runs[0]["stages"]) == 2
    assert runs[1]["stages"] == [["llvm", "warm start"]] * 2, runs[1]
