"""Loading compiled modules: shared objects through the dynamic loader (LLVM kept out of the user's process), MCJIT
where there is no linker."""

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from llvmlite import ir

from irc.targets.cpu.runtime import compile_worker, jit, loader, parallel
from tests.cpu.kernels import square_plus

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
NEEDS_LD = pytest.mark.skipif(shutil.which("ld") is None, reason="needs the system linker (ld)")


def _module(c):
    m = ir.Module()
    square_plus(m, "k", c)
    return m


def _runs(lib, c) -> bool:
    x = torch.arange(9, dtype=torch.float32)
    lib.function("k", *SIG)(0, 9, x.data_ptr())
    return torch.equal(x, torch.arange(9, dtype=torch.float32) ** 2 + c)


@pytest.fixture
def no_linker(monkeypatch):
    monkeypatch.setattr(compile_worker, "linker", lambda: None)
    loader.shared_objects.cache_clear()
    yield
    loader.shared_objects.cache_clear()


CHILD = """
import json, sys, torch, irc
m = torch.nn.Sequential(torch.nn.Linear(24, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
x = torch.randn(7, 24)
with torch.no_grad():
    y = torch.compile(m, backend=irc.backend)(x)
    ok = torch.allclose(y, m(x), rtol=1e-5, atol=1e-6)
print(json.dumps({"ok": ok, "llvm": "llvmlite.binding" in sys.modules}))
"""


@NEEDS_LD
def test_a_compiled_graph_keeps_llvm_out_of_the_users_process(tmp_path):
    env = {**os.environ, "IRC_CACHE_DIR": str(tmp_path)}
    for run in ("cold cache", "warm cache"):
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
        assert json.loads(out.stdout.strip().splitlines()[-1]) == {"ok": True, "llvm": False}, run


@NEEDS_LD
def test_shared_objects_are_the_default_and_closed_when_collected():
    e = jit.Engine()
    assert e.shared
    lib = e.compile(_module(3.0), use_cache=False)
    assert isinstance(lib._code, loader.SharedObject) and _runs(lib, 3.0)
    closed = lib._code._close
    del lib
    gc.collect()
    assert not closed.alive  # dlclose ran


def test_mcjit_loads_where_there_is_no_linker(no_linker):
    e = jit.Engine()
    assert not e.shared
    lib = e.compile(_module(5.0), use_cache=False)
    assert isinstance(lib._code, loader.JitObject) and _runs(lib, 5.0)


def test_the_way_of_loading_is_in_the_cache_key(monkeypatch):
    shared = jit.Engine()
    monkeypatch.setattr(loader, "shared_objects", lambda: not shared.shared)
    assert jit.Engine().key("same text") != shared.key("same text")


@pytest.mark.skipif(not parallel.entry_points(), reason="torch has no OpenMP runtime here")
def test_shared_objects_only_where_the_loader_binds_torchs_openmp(monkeypatch):
    wrong = {name: addr + 16 for name, addr in parallel.entry_points().items()}
    monkeypatch.setattr(parallel, "entry_points", lambda: wrong)
    loader.shared_objects.cache_clear()
    try:
        assert not loader.shared_objects()
    finally:
        loader.shared_objects.cache_clear()


@NEEDS_LD
def test_a_noexec_temporary_folder_loads_through_a_memory_file(monkeypatch):
    lib = jit.Engine().compile(_module(6.0), use_cache=False)
    blob = compile_worker.link_shared(jit.engine().object_code(_module(7.0)))
    real = ctypes.CDLL

    def noexec(path, *a, **k):  # as dlopen answers for a file on a noexec mount
        if not path.startswith("/proc/self/fd/"):
            raise OSError(f"{path}: failed to map segment from shared object")
        return real(path, *a, **k)

    monkeypatch.setattr(loader.ctypes, "CDLL", noexec)
    so = loader.SharedObject(blob)
    assert so._close.peek()[2][1] is not None  # the memory file stays open while the library is loaded
    x = torch.arange(9, dtype=torch.float32)
    ctypes.CFUNCTYPE(*SIG)(so.address("k"))(0, 9, x.data_ptr())
    assert torch.equal(x, torch.arange(9, dtype=torch.float32) ** 2 + 7.0) and _runs(lib, 6.0)
