"""The JIT engine and its on-disk object cache."""

import ctypes
import json
import os
import subprocess
import sys
import threading

import torch
from llvmlite import ir

from irc import cache
from irc.targets.cpu.runtime import jit
from tests.cpu.kernels import square_plus

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def _module(c=1.0):
    m = ir.Module()
    square_plus(m, "k", c)
    return m


def test_compile_and_call():
    lib = jit.Engine().compile(_module(2.0), use_cache=False)
    x = torch.arange(37, dtype=torch.float32)
    lib.function("k", *SIG)(3, 37, x.data_ptr())
    ref = torch.arange(37, dtype=torch.float32)
    ref[3:] = ref[3:] ** 2 + 2
    assert torch.equal(x, ref)
    assert not lib.cache_hit and lib.optimized_ir is not None


def test_host_and_vectorised_assembly():
    h = jit.host()
    assert h.cpu and h.triple.startswith(("x86_64", "aarch64"))
    asm = jit.engine().assembly(_module())
    if h.has("avx512f"):
        assert "zmm" in asm  # the loop vectoriser used the full AVX-512 width


def test_same_module_twice_is_loaded_once():
    e = jit.Engine()
    assert e.compile(_module(3.0), use_cache=False) is e.compile(_module(3.0), use_cache=False)


def test_concurrent_compiles():
    e, out = jit.Engine(), {}

    def work(k):
        out[k] = e.compile(_module(float(k)), use_cache=False)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, lib in out.items():
        x = torch.ones(5)
        lib.function("k", *SIG)(0, 5, x.data_ptr())
        assert torch.all(x == 1 + k)


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    jit.Engine().compile(_module(4.0), use_cache=False)
    assert not any(tmp_path.rglob("*"))
    jit.Engine().compile(_module(4.0), use_cache=True)
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 1


def test_process_setting_wins_over_the_default_option(tmp_path, monkeypatch):
    """IRC_CACHE=0 (the process setting) keeps the disk cache off even where a compile asks for it."""
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(cache._config, "enabled", False)
    assert not cache.usable()
    jit.Engine().compile(_module(5.0), use_cache=True)
    assert not any(tmp_path.rglob("*"))


CHILD = """
import ctypes, json, torch
from llvmlite import ir
from irc import cache
from irc.targets.cpu.runtime import jit
from tests.cpu.kernels import square_plus
m = ir.Module(); square_plus(m, "k", 0.5)
lib = jit.compile_module(m)
x = torch.linspace(-3, 3, 101)
lib.function("k", None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)(0, 101, x.data_ptr())
print(json.dumps({"hit": lib.cache_hit, "hits": cache.STATS.hits, "misses": cache.STATS.misses,
                  "ir": lib.optimized_ir is not None, "x": x.tolist()}))
"""


def test_second_process_hits_the_disk_cache(tmp_path):
    env = {**os.environ, "IRC_CACHE_DIR": str(tmp_path), "IRC_CACHE": "1"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def child():
        p = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=root, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout.strip().splitlines()[-1])

    first, second = child(), child()
    assert (first["hit"], first["misses"], first["hits"], first["ir"]) == (False, 1, 0, True)
    assert (second["hit"], second["misses"], second["hits"], second["ir"]) == (True, 0, 1, False)
    assert first["x"] == second["x"]
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporaries
