"""torch._dynamo.reset() releases what irc kept per graph (irc/lifetime.py; issue 18, point 7).

What irc kept before: every compile report (report._GRAPHS) and every JITed module with its MCJIT engine
(targets/cpu/jit.Engine._loaded), for the life of the process; what LLVM's global context and glibc's heap
kept after those went. The first test checks the objects, the others the process's resident memory: compiling
many distinct small graphs, then resetting, leaves the process no larger than torch itself does for the same
graphs with its own aot_eager backend (Dynamo and AOT autograd without a compiler), within 50 MB per 1000 graphs.
torch 2.13 itself keeps ~120 KB per graph after a reset (its compile metrics, Dynamo's instruction caches,
native allocations), so the process as a whole grows by that much whatever the backend. The bound holds for
graphs whose machine code comes from the disk cache; compiling them afresh, LLVM's pass manager (llvmlite)
keeps ~55 KB of native memory per module, which irc cannot release.
"""

import functools
import gc
import json
import os
import subprocess
import sys
import weakref

import pytest
import torch

import irc
from irc import report
from irc.targets.cpu.libs.measured import Measured
from irc.targets.cpu.runtime import jit

# A child process: n distinct graphs (one code object each: Dynamo recompiles one code object at most 8 times),
# each compiled by the backend and called once, after a warm-up of 10; RSS before and after the reset.
CHILD = r"""
import gc, json, sys
import torch, irc

def rss():
    gc.collect()
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024

OPS = ["sin", "cos", "exp", "tanh", "sigmoid", "relu"]

def graph(k):
    src = (f"def f(x):\n    y = x * {k * 0.001 + 0.5!r} + {k % 7}\n"
           f"    return y.{OPS[k % 6]}() + x.{OPS[(k // 6) % 6]}()\n")
    ns = {}
    exec(compile(src, f"<graph{k}>", "exec"), ns)
    return ns["f"]

def run(backend, lo, hi):
    x = torch.randn(8)
    for k in range(lo, hi):
        torch.compile(graph(k), backend=backend)(x)

backend, n = (irc.backend if sys.argv[1] == "irc" else sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(1)
run(backend, 0, 10)
torch._dynamo.reset()
start = rss()
run(backend, 10, 10 + n)
compiled = rss()
torch._dynamo.reset()
print(json.dumps({"start": start, "compiled": compiled, "reset": rss(), "reports": len(irc.report._GRAPHS)}))
"""


def _graphs(k: int):
    ops = ["sin", "cos", "exp"]
    ns = {}
    exec(
        compile(f"def f(x):\n    return (x * {k + 0.625}).{ops[k % 3]}() + {k + 1234}\n", f"<reset-graph{k}>", "exec"),
        ns,
    )
    return ns["f"]


def test_reset_releases_reports_modules_and_caches():
    x = torch.randn(8)
    layout = Measured("test-reset")
    layout.memory["problem"] = {"nchw": 1.0}
    before, known = report.mark(), set(jit.engine()._loaded.keys())
    for k in range(4):
        # a partial is not the backend torch keeps for reset: irc arms its own hook (lifetime.arm)
        torch.compile(_graphs(k), backend=functools.partial(irc.backend, options={"strict": True}))(x)
    graphs = report.reports_since(before).graphs
    assert len(graphs) == 4 and all(g.target == "cpu" for g in graphs), [str(g) for g in graphs]
    modules = [weakref.ref(m) for key, m in jit.engine()._loaded.items() if key not in known]
    reports = [weakref.ref(g) for g in graphs]
    assert modules
    del graphs

    torch._dynamo.reset()
    gc.collect()
    assert report._GRAPHS == [] and not report.reports_since(before).graphs
    assert all(r() is None for r in reports), "a compile report outlived the reset"
    assert all(m() is None for m in modules), "a JITed module (and its MCJIT engine) outlived the reset"
    assert layout.memory == {}, "the in-memory measured records were not released"

    # a mark taken before the reset still selects what is compiled after it
    torch.compile(_graphs(9), backend=irc.backend)(x)
    (g,) = report.reports_since(before).graphs
    assert g.index >= before and g.kind == "inference"


def test_explain_after_reset():
    torch.compile(_graphs(10), backend=irc.backend)(torch.randn(8))
    rep = irc.explain(_graphs(11), torch.randn(8))  # explain resets first
    assert len(rep.graphs) == 1 and rep.graphs[0].native


def _retained(backend: str, n: int, cache_dir) -> dict:
    env = {**os.environ, "IRC_CACHE_DIR": str(cache_dir), "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, backend, str(n)], env=env, capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["retained"] = out["reset"] - out["start"]
    return out


def _check(n: int, tmp_path):
    torch_only = _retained("aot_eager", n, tmp_path)
    cold = _retained("irc", n, tmp_path)  # compiles everything, and fills the disk cache
    warm = _retained("irc", n, tmp_path)  # the same graphs again: machine code and mem stages from the disk cache
    bound = 50 * n / 1000
    print(f"{n} graphs, MB: irc from a cold cache {cold}, from the disk cache {warm}, aot_eager {torch_only}")
    assert cold["reports"] == warm["reports"] == 0
    assert warm["retained"] <= torch_only["retained"] + bound, (
        f"after {n} graphs and a reset irc's process kept {warm['retained']:.1f} MB, torch's aot_eager "
        f"{torch_only['retained']:.1f} MB: irc's share is over {bound:.0f} MB ({warm}, {torch_only})"
    )
    # A cold compile also runs LLVM's O3 pipeline, and llvmlite 0.50 keeps ~55 KB of native memory per
    # ModulePassManager run (a leak in its pass builder, not reachable from irc): at most 150 KB a graph here.
    assert cold["retained"] <= torch_only["retained"] + bound + 0.15 * n, (cold, torch_only)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmRSS from /proc")
def test_200_graphs_then_reset_release_memory(tmp_path):
    _check(200, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmRSS from /proc")
def test_1000_graphs_then_reset_release_memory(tmp_path):
    _check(1000, tmp_path)
