"""parallel_for: chunking, correctness across threads, the small-work path, concurrent launches."""

import ctypes
import threading

import pytest
import torch
from llvmlite import ir

from irc.targets.cpu import jit, nativepool, parallel
from tests.cpu.kernels import square_plus

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


@pytest.fixture(params=["native", "python"], autouse=True)
def which_pool(request, monkeypatch):
    """Every test runs on the native-dispatch pool and on the Python fallback pool."""
    if request.param == "native" and not nativepool.supported():
        pytest.skip("native pool: Linux x86-64 only")
    monkeypatch.setattr(parallel, "USE_NATIVE", request.param == "native")
    return request.param


@pytest.fixture(scope="module")
def kernel():
    m = ir.Module()
    square_plus(m, "k", 1.0)
    return jit.compile_module(m, use_cache=False).function("k", *SIG)


def test_plan_covers_the_range_once_with_aligned_bounds():
    for start, end, threads in [(0, 100_000, 2), (3, 1_000_003, 4), (0, 40_000, 3), (5, 5, 2)]:
        chunks = parallel.plan(start, end, threads)
        covered = [i for s, e in chunks for i in (s, e)]
        assert covered == sorted(covered)
        assert sum(e - s for s, e in chunks) == end - start
        assert all((s - start) % 16 == 0 for s, _ in chunks)
        assert len(chunks) <= threads


def test_small_work_stays_on_one_chunk():
    assert parallel.plan(0, 1000, 8) == [(0, 1000)]
    assert parallel.plan(0, 1000, 8, work_per_item=1000) != [(0, 1000)]  # 1000 rows of 1000 items
    assert len(parallel.plan(0, 3, 8, work_per_item=10**6)) == 3  # few rows: split by rows


@pytest.mark.parametrize("n", [1, 17, 1000, 100_003, 1 << 20])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_match_serial(kernel, n, threads):
    x = torch.randn(n)
    want = x * x + 1
    parallel.parallel_for(kernel, 0, n, ctypes.c_void_p(x.data_ptr()), threads=threads, min_work=0)
    assert torch.equal(x, want)


def test_concurrent_launches_from_python_threads(kernel):
    xs = [torch.randn(200_000) for _ in range(6)]
    want = [x * x + 1 for x in xs]

    def work(x):
        for _ in range(3):
            parallel.parallel_for(kernel, 0, x.numel(), x.data_ptr(), threads=2, min_work=0)
            x.sub_(1).sqrt_()  # undo, so every round computes the same thing

    ts = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, w in zip(xs, want):
        parallel.parallel_for(kernel, 0, x.numel(), x.data_ptr(), threads=2, min_work=0)
        torch.testing.assert_close(x, w)


def test_worker_errors_reach_the_caller(kernel):
    with pytest.raises(ctypes.ArgumentError):
        parallel.parallel_for(kernel, 0, 1 << 20, 1.5, threads=2, min_work=0)  # not a pointer
    x = torch.zeros(1 << 16)  # the pool still works afterwards
    parallel.parallel_for(kernel, 0, x.numel(), x.data_ptr(), threads=2, min_work=0)
    assert torch.all(x == 1)


def test_default_thread_count_follows_torch():
    assert parallel.num_threads() == torch.get_num_threads()


def test_float_arguments_fall_back_to_the_python_pool(kernel):
    x = torch.randn(1 << 16)
    want = x * x + 1
    parallel.parallel_for(kernel, 0, x.numel(), ctypes.c_void_p(x.data_ptr()), threads=2, min_work=0)
    assert torch.equal(x, want)
    p = nativepool.NativePool(2) if nativepool.supported() else None
    if p is not None:
        assert p.run_range(kernel, 0, 10, 2, 1, (1.5,)) is False  # refused, nothing run
        p.close()
        assert not any(t.is_alive() for t in p._threads)


def test_many_chunks_and_odd_splits(kernel):
    for threads, n, align in [(4, 1001, 16), (3, 7, 16), (2, 33, 1)]:
        x = torch.randn(n)
        want = x * x + 1
        parallel.parallel_for(kernel, 0, n, x.data_ptr(), threads=threads, min_work=0, align=align)
        assert torch.equal(x, want), (threads, n, align)


def test_a_forked_child_gets_fresh_pools(kernel):
    import os

    x = torch.randn(1 << 16)
    parallel.parallel_for(kernel, 0, x.numel(), x.data_ptr(), threads=2, min_work=0)  # pools exist now
    pid = os.fork()
    if pid == 0:  # child: must not wait on the parent's workers
        try:  # no torch ops here: libgomp is not fork-safe once its threads exist
            y = (ctypes.c_float * 4096)(*([1.0] * 4096))
            parallel.parallel_for(kernel, 0, 4096, ctypes.addressof(y), threads=2, min_work=0)
            os._exit(0 if all(v == 2.0 for v in y) else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
