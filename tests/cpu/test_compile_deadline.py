"""IRC_COMPILE_DEADLINE: a module whose machine code does not come back from the compile worker in time is compiled
again at O1, and past that too its graph runs on the reference target; both are reported. The worker is one process,
reused, replaced when it dies, and never loads torch. IRC_TEST_COMPILE_HANG makes the worker hang at a level, as a
pass that never ends would; each test's kernel has a constant of its own, so no test loads another's module."""

import ctypes
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import torch
from llvmlite import ir

import irc
from irc import cache, report
from irc.targets.cpu.runtime import jit
from tests.cpu.kernels import square_plus

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
O1_NOTE = "O3 compile passed the 1 s deadline; compiled at O1"


@pytest.fixture
def deadline(monkeypatch):
    monkeypatch.setenv("IRC_COMPILE_DEADLINE", "1")
    monkeypatch.delenv("IRC_TEST_COMPILE_HANG", raising=False)
    return monkeypatch


def _module(c: float) -> ir.Module:
    m = ir.Module()
    square_plus(m, "k", c)
    return m


def _runs(lib, c: float) -> bool:
    x = torch.arange(9, dtype=torch.float32)
    lib.function("k", *SIG)(0, 9, x.data_ptr())
    return torch.equal(x, torch.arange(9, dtype=torch.float32) ** 2 + c)


def _compile(fn, *args):
    start = report.mark()
    got = torch.compile(fn, backend=irc.backend, options={"cache": False})(*args)
    return got, report.reports_since(start).graphs


def test_a_module_past_the_deadline_is_compiled_at_o1_and_reported(deadline, caplog):
    deadline.setenv("IRC_TEST_COMPILE_HANG", "O3")
    x = torch.randn(1000)
    fn = lambda x: (x * 1.625 + 0.25).relu()  # noqa: E731
    with caplog.at_level("WARNING", logger="irc.fallbacks"):
        got, [g] = _compile(fn, x)
    torch.testing.assert_close(got, fn(x))
    assert g.target == "cpu" and g.kernels == 1 and not g.target_fallbacks, str(g)
    assert g.compile_notes == [O1_NOTE] and f"llvm: {O1_NOTE}" in str(g)
    assert any(O1_NOTE in r.getMessage() for r in caplog.records), caplog.text


def test_a_module_past_the_deadline_at_both_levels_runs_on_the_reference(deadline, caplog):
    deadline.setenv("IRC_TEST_COMPILE_HANG", "O3,O1")
    x, y = torch.randn(300), torch.randn(300)
    fn = lambda x, y: torch.tanh(x * y) - 0.875  # noqa: E731
    with caplog.at_level("WARNING", logger="irc.fallbacks"):
        got, [g] = _compile(fn, x, y)
    torch.testing.assert_close(got, fn(x, y))
    assert g.kernels == 0 and [what for what, _ in g.target_fallbacks] == ["graph"], str(g)
    why = g.target_fallbacks[0][1]
    assert "CompileTimeout" in why and "O3 compile passed the 1 s deadline; O1 compile passed" in why, why
    assert any("CompileTimeout" in r.getMessage() for r in caplog.records), caplog.text


def test_both_levels_past_the_deadline_raise_once_per_process(deadline):
    deadline.setenv("IRC_TEST_COMPILE_HANG", "O3,O1")
    e = jit.Engine()
    with pytest.raises(jit.CompileTimeout, match="O1 compile passed the 1 s deadline"):
        e.compile(_module(15.0), use_cache=False)
    start = time.perf_counter()
    with pytest.raises(jit.CompileTimeout):  # known to pass it: no second wait
        e.compile(_module(15.0), use_cache=False)
    assert time.perf_counter() - start < 0.5


def test_the_o1_object_is_cached_under_a_key_of_its_own(deadline, tmp_path):
    cache.set_dir(tmp_path)
    try:
        deadline.setenv("IRC_TEST_COMPILE_HANG", "O3")
        lib = jit.Engine().compile(_module(16.0))
        assert lib.note == O1_NOTE and _runs(lib, 16.0)
        deadline.delenv("IRC_TEST_COMPILE_HANG")
        assert cache.get("obj", lib.key) is None  # nothing under the O3 key: O1 code is not O3's
        again = jit.Engine().compile(_module(16.0))  # a later process: the O1 object, without waiting again
        assert again.cache_hit and "compiled at O1" in again.note and _runs(again, 16.0)
        deadline.setenv("IRC_COMPILE_DEADLINE", "2")  # another deadline: O3 is tried again
        third = jit.Engine().compile(_module(16.0))
        assert not third.cache_hit and third.note is None and _runs(third, 16.0)
    finally:
        cache.set_dir(None)


def test_one_worker_serves_every_module_and_a_dead_one_is_replaced(deadline):
    e = jit.Engine()
    assert _runs(e.compile(_module(11.0), use_cache=False), 11.0)
    w = jit.worker()
    served = w.requests
    assert _runs(e.compile(_module(12.0), use_cache=False), 12.0)
    assert jit.worker() is w and w.requests == served + 1
    maps = Path(f"/proc/{w.pid}/maps")  # Linux: the libraries the worker loaded
    if maps.exists():
        loaded = maps.read_text()
        assert "llvmlite" in loaded and "torch" not in loaded
    os.kill(w.pid, signal.SIGKILL)
    w.proc.wait()
    lib = e.compile(_module(13.0), use_cache=False)
    assert jit.worker().pid != w.pid and lib.note is None and _runs(lib, 13.0)


def test_a_worker_that_dies_mid_compile_is_reported_and_o1_compiles(deadline):
    deadline.setenv("IRC_COMPILE_DEADLINE", "30")
    jit.Engine().compile(_module(17.5), use_cache=False)  # the worker is up before the clock starts
    deadline.setenv("IRC_TEST_COMPILE_HANG", "O3")
    pid = jit.worker().pid  # the worker the compile will use (nothing else compiles in this process meanwhile)
    killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
    killer.start()
    lib = jit.Engine().compile(_module(17.0), use_cache=False)
    killer.join()
    assert lib.note == "O3 compile's worker died (killed by signal 9); compiled at O1" and _runs(lib, 17.0)


def test_llvm_errors_come_back_and_the_worker_goes_on(deadline):
    e = jit.Engine()
    with pytest.raises(RuntimeError, match="expected"):
        e.compile("this is not LLVM IR", use_cache=False)
    w = jit.worker()
    assert _runs(e.compile(_module(18.0), use_cache=False), 18.0) and jit.worker() is w


def test_no_deadline_compiles_in_process(monkeypatch):
    monkeypatch.setenv("IRC_COMPILE_DEADLINE", "0")
    before = jit._worker[0]
    assert _runs(jit.Engine().compile(_module(19.0), use_cache=False), 19.0)
    assert jit._worker[0] is before
