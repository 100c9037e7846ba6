"""Threads: kernels run on torch's OpenMP runtime (parallel.py), with torch's thread count, in static chunks."""

import ctypes
import os
import threading
import time

import pytest
import torch
from llvmlite import ir

from irc.dynamo.backend import compile_function
from irc.targets.cpu.libs import externs
from irc.targets.cpu.runtime import jit, launcher, parallel
from irc.targets.cpu.runtime.compiled import SERIAL
from tests.cpu.kernels import range_loop, square_plus
from tests.cpu.programs import build, tolerance

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
I64 = ir.IntType(64)


@pytest.fixture
def threads():
    """torch.set_num_threads for one test; torch's own count afterwards."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tid():
    """(tid, tid_par): tid(start, end, i64* out) writes out[i] = omp_get_thread_num(), the thread that ran item i."""
    m = ir.Module()
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, I64, I64.as_pointer()]), "tid")
    get = ir.Function(m, ir.FunctionType(ir.IntType(32), []), "omp_get_thread_num")
    s, e, out = fn.args
    range_loop(fn, s, e, lambda b, i: b.store(b.sext(b.call(get, []), I64), b.gep(out, [i]))).ret_void()
    parallel.outline(m, fn)
    lib = jit.compile_module(m, use_cache=False)
    return lib.function("tid", *SIG), lib.function("tid_par", *parallel.PAR_SIG)


def test_torchs_openmp_runtime_is_the_one_bound():
    """torch's parallel backend is OpenMP in the builds irc supports: irc finds that very library, loaded."""
    assert "parallel backend: OpenMP" in torch.__config__.parallel_info()
    path = parallel.runtime()
    assert path is not None and os.path.basename(path).startswith(("libgomp", "libomp", "libiomp5"))
    with open("/proc/self/maps") as f:
        assert any(line.rstrip().endswith(path) for line in f), f"{path} is not loaded in this process"


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 100_003])
@pytest.mark.parametrize("team", [1, 2, 3])
def test_static_chunks_on_the_asked_number_of_threads(tid, n, team):
    fn, par = tid
    out = torch.full((n + 5,), -1, dtype=torch.int64)
    par(5, n + 5, out.data_ptr(), team)  # items [5, n + 5): the first five are not the launch's
    used = min(team, n)  # never more threads than items
    want = [-1] * 5 + [next(t for t in range(used) if i < n * (t + 1) // used) for i in range(n)]
    assert out.tolist() == want


def test_a_launch_uses_torchs_thread_count(tid, threads):
    fn, par = tid
    out = torch.zeros(4096, dtype=torch.int64)
    for t in (1, 2, 3):
        threads(t)
        out.fill_(-1)
        parallel.launch(fn, par, out.numel(), out.data_ptr(), 1, min_work=0)
        assert sorted(set(out.tolist())) == list(range(t))
    out.fill_(-1)
    parallel.launch(fn, par, out.numel(), out.data_ptr(), 1, min_work=out.numel() + 1)  # below the threshold
    assert set(out.tolist()) == {0}


def _run(program, consts, inputs, min_work: int):
    program.compiled.min_work = min_work  # the threshold every launch of a default-mode program binds
    program.reset()
    return program([*inputs, *consts])


FNS = {
    "pointwise": lambda x: (x * 2).sin() + x,
    "row sum": lambda x: x.sum(-1),
    "column sum": lambda x: x.sum(0),
    "softmax": lambda x: torch.softmax(x, -1),
    "argmax": lambda x: x.argmax(-1),
    "strided": lambda x: x.flatten().cumsum(0)[::7] * 1,
}


@pytest.mark.parametrize("name", sorted(FNS))
@pytest.mark.parametrize("shape", [(3, 20011), (515, 257), (1, 100_003), (7, 5)])
def test_threaded_results_are_the_serial_ones(threads, name, shape):
    """Bit for bit, on any number of threads: each item is computed whole by one thread, reductions included."""
    # values in [0, 1): sums without cancellation, whose order against eager's the tolerance covers
    fn, x = FNS[name], torch.rand(*shape, generator=torch.Generator().manual_seed(sum(shape)))
    program, consts = build(fn, x)
    want = _run(program, consts, [x], SERIAL)
    torch.testing.assert_close(want[0], fn(x), **tolerance(x.dtype))
    for t in (1, 2, 3):
        threads(t)
        got = _run(program, consts, [x], 0)
        assert all(torch.equal(g, w) for g, w in zip(got, want)), (name, shape, t)


@pytest.mark.parametrize("name", ["pointwise", "row sum", "column sum", "softmax"])
def test_dynamic_sizes_threaded_as_serial(threads, name):
    fn = FNS[name]
    program, consts = build(fn, torch.randn(6, 33), dynamic=True)
    threads(2)
    for shape in [(5, 1000), (3, 20011), (257, 515), (1, 7)]:
        x = torch.rand(*shape)
        want = _run(program, consts, [x], SERIAL)
        got = _run(program, consts, [x], 0)
        assert all(torch.equal(g, w) for g, w in zip(got, want)), (name, shape)
        torch.testing.assert_close(got[0], fn(x), **tolerance(x.dtype))


def test_runtime_extents_count_items_across_thread_chunks(threads):
    """With runtime extents a kernel counts its items' digits (three outer dims; a column chunk and a row) from each
    thread's first item with a carry, instead of dividing per item: every chunk start must land on the same points."""
    fn = lambda x: (x * 2).sin().sum(-1) + x.mean(-1)  # noqa: E731
    program, consts = build(fn, torch.randn(4, 5, 6, 33), dynamic=True)
    threads(3)
    for shape in [(3, 7, 5, 40), (2, 2, 9, 1000), (5, 3, 2, 17), (7, 2, 3, 300)]:
        x = torch.rand(*shape, generator=torch.Generator().manual_seed(sum(shape)))
        want = _run(program, consts, [x], SERIAL)
        got = _run(program, consts, [x], 0)
        assert all(torch.equal(g, w) for g, w in zip(got, want)), shape
        torch.testing.assert_close(got[0], fn(x), **tolerance(x.dtype))
    program, consts = build(
        lambda x: x.t() * 2 + 1, torch.randn(40, 70), dynamic=True
    )  # digits: a column chunk, then a row
    for shape in [(37, 70), (300, 129)]:
        x = torch.rand(*shape)
        torch.testing.assert_close(_run(program, consts, [x], 0)[0], x.t() * 2 + 1)


def test_one_threshold_next_to_library_calls():
    """A large launch in a graph that also calls MKL goes to torch's threads as in any graph (no 32x threshold):
    both run on the same OpenMP team, so they no longer compete for the cores."""
    a, b = torch.randn(64, 256), torch.randn(256, 1024)
    program, consts = build(lambda a, b: torch.softmax(a @ b, -1), a, b)
    cx = program.context()
    launches = [s for s, name in zip(cx.steps, cx.names) if name.startswith("launch")]
    assert 64 * 1024 >= parallel.MIN_WORK and [s.func for s in launches] == [parallel.launch]
    torch.testing.assert_close(program([a, b, *consts])[0], torch.softmax(a @ b, -1), **tolerance(a.dtype))


def test_reduce_overhead_launchers_run_on_torchs_thread_count(threads, monkeypatch):
    monkeypatch.setattr(externs, "onednn_outruns_mkl", lambda: False)  # the product on MKL's path, a launcher's sgemm_
    a, b = torch.randn(64, 256), torch.randn(256, 1024)
    fn = lambda a, b: torch.softmax(a @ b, -1) * 2  # noqa: E731
    program, consts = compile_function(fn, a, b, mode="reduce-overhead", strict=True, cache=False)
    assert program.compiled.launch_plan.threaded and program.python_steps == 2, launcher.describe(program.compiled)
    assert "large launches on torch's OpenMP threads" in launcher.describe(program.compiled)[0]
    results = []
    for t in (1, 2, 3):
        threads(t)
        results.append(program([a, b, *consts])[0])
        (cx,) = program._free  # the context the call ran on, its launchers' env
        assert cx.guard.env[launcher.THREADS] == t
    torch.testing.assert_close(results[0], fn(a, b), **tolerance(a.dtype))
    assert all(torch.equal(r, results[0]) for r in results[1:])


def test_concurrent_launches_from_python_threads():
    m = ir.Module()
    parallel.outline(m, square_plus(m, "k", 1.0))
    lib = jit.compile_module(m, use_cache=False)
    fn, par = lib.function("k", *SIG), lib.function("k_par", *parallel.PAR_SIG)
    xs = [torch.randn(200_000) for _ in range(6)]
    want = [x * x + 1 for x in xs]

    def work(x):
        for _ in range(3):  # each Python thread gets a team of its own from the runtime
            parallel.launch(fn, par, x.numel(), x.data_ptr(), 1, min_work=0)
            x.sub_(1).sqrt_()  # undo, so every round computes the same thing

    ts = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, w in zip(xs, want):
        parallel.launch(fn, par, x.numel(), x.data_ptr(), 1, min_work=0)
        torch.testing.assert_close(x, w)


def test_a_forked_child_runs_serially(tid, threads):
    """libgomp's threads do not survive fork: the child must not wait on them (torch's own ops would)."""
    fn, par = tid
    threads(2)
    out = torch.zeros(4096, dtype=torch.int64)
    parallel.launch(fn, par, out.numel(), out.data_ptr(), 1, min_work=0)  # the team exists now
    assert set(out.tolist()) == {0, 1}
    pid = os.fork()
    if pid == 0:  # no torch ops here: they would wait on the parent's threads
        try:
            y = (ctypes.c_int64 * 4096)(*([-1] * 4096))
            parallel.launch(fn, par, 4096, ctypes.addressof(y), 1, min_work=0)
            os._exit(0 if parallel.num_threads() == 1 and set(y) == {0} else 1)
        finally:
            os._exit(2)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in a launch")
    assert os.waitstatus_to_exitcode(done[1]) == 0
