"""No verdict depends on the thread count (the portability issue): a sample of the checks, each in a child process
that sets torch.set_num_threads(n) before compiling, at n = 1 and n = 2. Each child's verdict must be a pass (a match,
or for the training step a rounding tie, as bench/demo.py's check_train judges it), and the irc results at 1 and 2
threads must agree with each other within the float32 tolerance the checks hold them to against eager.

The sample: the demo's convnet-train training step (judged by ties.judge_step exactly as check_train does), the demo
MLP's forward (batch 32), and a softmax + layer_norm function. Each child gets its own cold IRC_CACHE_DIR, so that
machine code compiled at one thread count is never reused at the other."""

import json
import os
import subprocess
import sys

import torch

from irc.bench import models as M
from irc.bench.check import FORWARD_TOL, Mismatch, StepResult, assert_close, max_error, targets_for, twin
from irc.bench.ties import judge_step

THREADS = (1, 2)

CHILD = r"""
import json, sys
import torch

n, out_path = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(n)  # before anything is compiled
import torch.nn.functional as F
import irc
from irc.bench import models as M
from irc.bench.check import FORWARD_TOL, Mismatch, assert_close, loss_fn, targets_for, train_step, twin
from irc.bench.ties import judge_step

verdicts, saved = {}, {}

def compile_(fn):
    return torch.compile(fn, backend=irc.backend)

# the demo's convnet-train training check, as bench/demo.py check_train runs it
model, inputs = M.convnet(train=True)
mine, before = twin(model), twin(model)
eager_step, compiled_step = loss_fn(model), compile_(loss_fn(mine))
with torch.no_grad():
    target = targets_for(twin(model)(*inputs))
got = train_step(mine, inputs, compiled_step, target)
want = train_step(model, inputs, eager_step, target)
try:
    v = judge_step(before, inputs, target, got, want)
    verdicts["convnet-train"] = {"pass": True, "tie": v.tie, "errs": v.errs}
except Mismatch as e:
    verdicts["convnet-train"] = {"pass": False, "why": str(e)}
saved["convnet-train"] = {k: getattr(got, k) for k in ("loss", "grads", "buffers", "params", "loss2")}
torch._dynamo.reset()

def softmax_layer_norm(x, w, b):
    return F.layer_norm(torch.softmax(x * 3.0, dim=-1) + x, x.shape[-1:], w, b)

g = torch.Generator().manual_seed(3)
mlp, mlp_in = M.mlp(32)
cases = {
    "mlp-forward": (mlp, mlp_in),
    "softmax-layer-norm": (softmax_layer_norm, (torch.randn(64, 384, generator=g), torch.rand(384, generator=g) + 0.5,
                                                torch.randn(384, generator=g))),
}
for name, (fn, args) in cases.items():
    with torch.no_grad():
        want, got = fn(*args), compile_(twin(fn))(*args)
    try:
        verdicts[name] = {"pass": True, "tie": None, "errs": {"output": assert_close(name, got, want, FORWARD_TOL)}}
    except Mismatch as e:
        verdicts[name] = {"pass": False, "why": str(e)}
    saved[name] = {"output": got, "eager": want}
    torch._dynamo.reset()

torch.save(saved, out_path)
print(json.dumps({"threads": torch.get_num_threads(), "verdicts": verdicts}))
"""


def _run_children(tmp_path) -> dict[int, dict]:
    """Both thread counts at once (two cold compiles on two cores), each with its own cache directory."""
    procs = {}
    for n in THREADS:
        cache = tmp_path / f"cache{n}"
        cache.mkdir()
        env = {**os.environ, "IRC_CACHE_DIR": str(cache), "PYTHONWARNINGS": "ignore"}
        out = tmp_path / f"results{n}.pt"
        cmd = [sys.executable, "-c", CHILD, str(n), str(out)]
        procs[n] = (subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out)
    results = {}
    for n, (proc, out) in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"child at {n} thread(s) failed:\n{stderr[-3000:]}"
        report = json.loads(stdout.strip().splitlines()[-1])
        assert report["threads"] == n, f"child asked for {n} thread(s), ran with {report['threads']}"
        results[n] = {**report, "saved": torch.load(out, weights_only=False)}
    return results


def test_verdicts_and_results_do_not_depend_on_the_thread_count(tmp_path):
    results = _run_children(tmp_path)
    one, two = results[1], results[2]

    # (a) every check passes at every thread count: a match, or (training step only) a rounding tie
    for n, r in results.items():
        for name, v in r["verdicts"].items():
            assert v["pass"], f"{name} at {n} thread(s): {v['why']}"
            against = "irc's float64 step" if v["tie"] else "eager"
            print(f"{name} at {n} thread(s): {v['tie'] or 'match'} (max abs errors against {against}: {v['errs']})")

    # (b) the irc results at 1 and 2 threads agree within the float32 tolerance held against eager
    for name in ("mlp-forward", "softmax-layer-norm"):
        a, b, eager = one["saved"][name]["output"], two["saved"][name]["output"], one["saved"][name]["eager"]
        err = assert_close(f"{name}: irc at 2 threads against irc at 1", b, a, FORWARD_TOL)
        print(
            f"{name}: irc 1 vs 2 threads max abs difference {err:.3g} "
            f"(against eager: {max_error(a, eager):.3g} at 1, {max_error(b, eager):.3g} at 2)"
        )

    # the training steps: the same judge as against eager, so that a rounding tie between the two is no failure
    model, inputs = M.convnet(train=True)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    a, b = (StepResult(**r["saved"]["convnet-train"]) for r in (one, two))
    try:
        v = judge_step(model, inputs, target, b, a)
    except Mismatch as e:
        raise AssertionError(f"convnet-train: irc's step at 2 threads against its step at 1: {e}") from None
    print(f"convnet-train: irc 1 vs 2 threads: {v.tie or 'match'}, max abs differences {v.errs}")
