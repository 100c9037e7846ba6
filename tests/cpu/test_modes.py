"""The compile modes on the CPU target: reduce-overhead (JITed launchers: a call runs almost no Python) and
max-autotune (measured kernel variants, kept in the disk cache), numerically against eager."""

import threading

import pytest
import torch
import torch.nn.functional as F

import irc
from irc import report
from irc.bench.models import convnet, mlp

from .programs import tolerance

MODES = ("reduce-overhead", "max-autotune")


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def _compiled(fn, mode, **options):
    return torch.compile(fn, backend=irc.backend, options={"mode": mode, "strict": True, **options})


def _graphs(start):
    return [g for g in report.reports_since(start).graphs if g.target == "cpu"]


CASES = {
    "pointwise": (lambda x, y: (x * 2 + y).relu() * y.sigmoid(), lambda: (randn(33, 65), randn(33, 65))),
    "pointwise-large": (lambda x: (x * 3).sin() + 1, lambda: (randn(515, 257),)),  # parallel: the native pool
    "reduction": (lambda x: torch.softmax(x, -1) + x.sum(0, keepdim=True), lambda: (randn(17, 130),)),
    "linear-relu": (lambda x, w, b: F.linear(x, w, b).relu(), lambda: (randn(8, 96), randn(40, 96), randn(40))),
    "matmul-transposed": (lambda a, b: a.t() @ b + a.sum(), lambda: (randn(70, 24), randn(70, 33))),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_mode_matches_eager(mode, case):
    fn, make = CASES[case]
    inputs = make()
    f = _compiled(fn, mode)
    for _ in range(2):  # the second call reuses the context the first prepared
        torch.testing.assert_close(f(*inputs), fn(*inputs), **tolerance(torch.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("demo", ["mlp", "convnet"])
def test_demo_models(mode, demo):
    model, inputs = mlp(32) if demo == "mlp" else convnet()
    model.eval()
    start = report.mark()
    with torch.no_grad():
        got, want = _compiled(model, mode)(*inputs), model(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert all(g.mode == mode for g in _graphs(start))


def _python_steps_and_paths(model, x, mode, **options):
    start = report.mark()
    with torch.no_grad():
        torch.testing.assert_close(_compiled(model, mode, **options)(x), model(x), rtol=1e-4, atol=1e-4)
    (g,) = _graphs(start)
    return g, g.python_steps, set(g.extern_paths.values())


def test_reduce_overhead_runs_a_small_mlp_as_one_launcher():
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).eval()
    x = torch.randn(32, 64)
    _, default, _ = _python_steps_and_paths(model, x, "default")
    g, steps, paths = _python_steps_and_paths(model, x, "reduce-overhead")
    # default: each extern (the matmuls), each launch and the output's allocation is a Python step;
    # reduce-overhead: the allocation, then one JITed launcher that runs all the rest (small matmuls through sgemm_)
    assert steps == 2 < default and paths == {"sgemm_"}, (steps, default, paths)
    assert f"1 JITed launcher(s) run {default - 1} of {default} steps; 0 stay Python" in str(g)


def test_reduce_overhead_keeps_the_default_library_paths():
    """A product the default runs on oneDNN with its weight prepacked (option prepack) stays that library call under
    reduce-overhead (not the launcher's sgemm_: it would round differently, and it is slower); the small last layer
    is sgemm_."""
    model, (x,) = mlp(32)
    model.eval()
    _, default, default_paths = _python_steps_and_paths(model, x, "default", prepack=True)
    g, steps, paths = _python_steps_and_paths(model, x, "reduce-overhead", prepack=True)
    assert "mkldnn_packed" in default_paths and paths == default_paths - {"aten"} | {"sgemm_"}, (default_paths, paths)
    assert steps < default, (steps, default)
    assert "the default runs as mkldnn_packed" in str(g), str(g)


def test_reduce_overhead_with_runtime_sizes_says_why_not():
    start = report.mark()
    f = torch.compile(
        lambda x: x * 2 + 1, backend=irc.backend, dynamic=True, options={"mode": "reduce-overhead", "strict": True}
    )
    for n in (5, 9):
        x = randn(n, 3)
        torch.testing.assert_close(f(x), x * 2 + 1)
    assert any("runtime sizes" in note for g in _graphs(start) for note in g.mode_notes)


def test_reduce_overhead_concurrent_calls():
    fn, make = CASES["pointwise-large"]
    (x,) = make()
    f = _compiled(fn, "reduce-overhead")
    want = fn(x)
    f(x)
    errors = []

    def work():
        try:
            for _ in range(20):
                torch.testing.assert_close(f(x), want)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_max_autotune_choices_come_from_the_disk_cache_the_second_time(tmp_path, monkeypatch):
    from irc import cache
    from irc.targets.cpu.runtime import autotune

    monkeypatch.setattr(autotune, "BUDGET_S", 0.2)  # bounded: the test checks reuse, not the choice
    cache.set_dir(tmp_path)
    try:
        fn, make = CASES["reduction"]
        inputs = make()
        notes = []
        for _ in range(2):  # a second compile of the same graph, as a second process would do
            torch._dynamo.reset()  # else Dynamo reuses its first compile and irc is not asked again
            before = dict(autotune.STATS)
            start = report.mark()
            torch.testing.assert_close(_compiled(fn, "max-autotune")(*inputs), fn(*inputs), **tolerance(torch.float32))
            (g,) = _graphs(start)
            notes.append(next(n for n in g.mode_notes if n.startswith("autotune")))
            notes.append({k: autotune.STATS[k] - before[k] for k in ("measured", "disk_hits")})
    finally:
        cache.set_dir(None)
    assert notes[1] == {"measured": 1, "disk_hits": 0} and "measured in" in notes[0]
    assert notes[3] == {"measured": 0, "disk_hits": 1} and "from the disk cache" in notes[2]


@pytest.mark.parametrize("broken", ["launcher", "autotune"])
def test_a_mode_that_fails_leaves_the_default_steps(monkeypatch, broken):
    from irc.targets.cpu.runtime import autotune, launcher

    def fail(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(launcher, "emit", fail) if broken == "launcher" else monkeypatch.setattr(autotune, "tune", fail)
    fn, make = CASES["linear-relu"]
    inputs = make()
    start = report.mark()
    torch.testing.assert_close(
        _compiled(fn, "max-autotune", cache=False)(*inputs), fn(*inputs), **tolerance(torch.float32)
    )
    (g,) = _graphs(start)
    want = "no launcher: RuntimeError: boom" if broken == "launcher" else "autotune failed (RuntimeError: boom)"
    assert any(want in note for note in g.mode_notes), g.mode_notes


@pytest.mark.parametrize("case", ["linear-relu", "pointwise-large", "matmul-transposed"])
def test_max_autotune_chosen_variants_compute_the_same(monkeypatch, case):
    """Whatever the measurement picks (here: any variant at all, the margin set so that every one qualifies,
    one MKL thread included), the rebuilt program matches eager."""
    from irc.targets.cpu.runtime import autotune

    monkeypatch.setattr(autotune, "MARGIN", 1e9)
    monkeypatch.setattr(autotune, "SMALL_S", 0.0)
    # on a loaded machine a call on torch's threads can wait a scheduler slice (~20 ms) for a descheduled thread,
    # as torch's own ops do: the budget must leave the matmuls their turn after the launches
    monkeypatch.setattr(autotune, "BUDGET_S", 2.0)
    fn, make = CASES[case]
    inputs = make()
    start = report.mark()
    # matmul="extern": the library's products (with every variant qualifying, "auto" could pick generated ones)
    compiled = _compiled(fn, "max-autotune", cache=False, matmul="extern")
    torch.testing.assert_close(compiled(*inputs), fn(*inputs), **tolerance(torch.float32))
    (g,) = _graphs(start)
    assert any(note.startswith("autotune (measured") for note in g.mode_notes), g.mode_notes
    if case != "pointwise-large" and torch.get_num_threads() > 1:
        assert any("one MKL thread" in note for note in g.mode_notes), g.mode_notes


def test_max_autotune_keeps_a_constant_weight_prepacked_after_measuring_on_random_inputs():
    """max-autotune measures whole programs on random inputs. A product by a frozen weight must not take the random
    weight for the constant it holds prepacked: it did, then saw the real weight as a change and ran MKL's unpacked
    path for good (mlp-b32 under max-autotune 0.89x eager, the default 1.17x). The real weight stays the constant
    one (no "weight changes" path in the report), and the model matches eager."""
    from torch.profiler import ProfilerActivity, profile

    model, (x,) = mlp(32)
    model.eval()
    start = report.mark()
    f = _compiled(model, "max-autotune", cache=False, prepack=True)
    with torch.no_grad():
        torch.testing.assert_close(f(x), model(x), **tolerance(torch.float32))
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            f(x)
    (g,) = _graphs(start)
    assert any("measured" in note for note in g.mode_notes), g.mode_notes  # the programs ran on random inputs
    assert not any("weight changes" in problem for problem in g.extern_paths), g.extern_paths
    assert {p for p in g.extern_paths.values() if p.startswith("mkldnn")} == {"mkldnn_packed"}, g.extern_paths
    assert sum(e.name == "mkldnn::_linear_pointwise" for e in prof.events()) == 2  # both 1024x1024 products packed
