"""The JIT for the host CPU: llvmlite.ir.Module -> optimised machine code, loaded -> callable addresses.

    mod = ir.Module(); ... build functions with IRBuilder ...
    lib = compile_module(mod)                       # or Engine(opt=3).compile(mod)
    fn = lib.function("k", None, c_int64, c_int64, c_void_p)
    fn(0, n, buf.data_ptr())                        # ctypes releases the GIL during the call

How: the module text is optimised with LLVM's new pass manager at O3 (loop and SLP vectorisation on)
for the host triple, CPU and features and emitted as an ELF object by a TargetMachine; where the system has a
linker the object is position-independent and linked into a shared object, which the process dlopens, and
otherwise it is loaded into a fresh MCJIT engine (loader.py). With shared objects and the compile worker the
user's process never loads LLVM: the worker also answers what LLVM calls this machine (host()). The machine
code is the on-disk cache's entry, keyed by the IR text, the CPU, its features, the optimisation level, the
way it is loaded and the irc/llvmlite/LLVM versions (irc/cache.py, which verifies every entry before it is
loaded). A process that loads from the cache parses no IR and runs no pass.

The deadline: LLVM cannot be interrupted inside a process, so `compile` optimises and emits each module in the
compile worker (compile_worker.py: one process, started while the first graph's passes run and reused, importing
llvmlite only) and waits at most IRC_COMPILE_DEADLINE seconds for it. Past that the worker is killed and the module
compiled again at FALLBACK_OPT (O1: no vectorisers, no unrolling) in a fresh one under the same deadline; the
CompiledModule's `note` says so, the compile report prints it (`llvm:`) and the irc.fallbacks logger warns. The O1
object is cached under a key of its own (Engine.fallback_key: the O3 key, the level and the deadline), which a
lookup tries after the O3 key, so a later process loads it without waiting, and a longer deadline tries O3 again.
Past the deadline at O1 too, `compile` raises CompileTimeout (and raises it at once for that module for the rest of
the process); the CPU target turns it into a TargetError, and the driver runs the graph on the reference target and
reports why. A worker that dies inside a compile (a crash in LLVM) counts as a passed deadline. The default, 60 s,
is over 25 times the slowest module of the demo and benchmark models (ResNet-18's forward: 1.0 to 2.2 s on the
2-core EPYC, loaded by other work); 0 compiles in-process without a deadline. A worker that cannot start leaves the process compiling
in-process, after one warning. `assembly` and `object_code` (tests and tools) compile in-process.

The host is this machine unless IRC_CPU names another CPU (runtime/isa.py): an x86-64 level or CPU that this
machine can run, or an aarch64 one whose code is only generated (Engine.object_code; compile raises ForeignCPU).

Each compiled module is loaded on its own (a shared object opened RTLD_LOCAL, or an MCJIT engine), which keeps
symbol names private to it (two kernels may both be called "kernel") and lets a module be freed with its
CompiledModule: the Engine shares a module compiled
earlier in the process only while something holds it (weakly referenced), so the machine code of
graphs Dynamo dropped (torch._dynamo.reset()) is released with them. LLVM's global context is not
thread-safe, so compilation holds one lock; calling compiled code needs none.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import platform
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import llvmlite
from llvmlite import ir

from irc import cache, env
from irc.log import get as logger

from . import compile_worker, isa, loader, tuning

PIPELINE_VERSION = "2"  # bump when the pass pipeline or object loading changes meaning
FALLBACK_OPT = 1  # the cheaper level a module that passed its deadline is compiled at (no vectorisers, no unrolling)

_lock = threading.RLock()
_worker: list[compile_worker.Worker | None] = [None]  # the process's compile worker, started at its first compile
_forked: list[compile_worker.Worker] = []  # a forked child's copy of its parent's worker, never used or collected
_no_worker: list[str] = []  # why the worker could not start: the process compiles in-process from then on
_gave_up: dict[tuple[str, float], str] = {}  # (key, deadline) of a module that passed it at both levels -> why
fallbacks_log = logger("fallbacks")


class ForeignCPU(RuntimeError):
    """IRC_CPU names a CPU of another architecture: irc generates its code but cannot run it here."""


class CompileTimeout(RuntimeError):
    """A module's machine code did not come back from the compile worker within IRC_COMPILE_DEADLINE, at its level
    nor at FALLBACK_OPT (each time it passed the deadline, or the worker died); the CPU target's TargetError
    carries it to the driver, which runs the graph on the reference target and reports why."""


def worker() -> compile_worker.Worker:
    """The process's compile worker (the caller holds _lock): started at the first call, replaced once it died or
    was killed at a deadline."""
    w = _worker[0]
    if w is None or not w.alive():
        if w is not None:
            w.close()
        else:
            atexit.register(_stop_worker)
        _worker[0] = w = compile_worker.Worker()
    return w


def start_worker() -> None:
    """Start the compile worker now where the deadline wants one, so that it loads llvmlite while the passes run;
    skipped while another thread compiles (it holds the lock, and the worker)."""
    if env.get("IRC_COMPILE_DEADLINE") and not _no_worker and _lock.acquire(blocking=False):
        try:
            worker()
        except compile_worker.NoWorker:
            pass  # the first compile says so
        finally:
            _lock.release()


def _stop_worker() -> None:
    if (w := _worker[0]) is not None:
        w.kill()


def _forget_worker() -> None:
    # a forked child must not talk to its parent's worker: it starts its own at its first compile
    if (w := _worker[0]) is not None:
        w.close()
        _forked.append(w)
        _worker[0] = None


os.register_at_fork(after_in_child=_forget_worker)


@dataclass(frozen=True)
class HostInfo:
    """The machine code is generated for: triple, CPU name, LLVM feature string, vector width."""

    triple: str
    cpu: str
    features: str

    @property
    def runs_here(self) -> bool:
        """This process can run the code (the triple's architecture is the process's)."""
        return self.triple.split("-")[0] == _ARCH.get(platform.machine(), platform.machine())

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features.split(",")

    @property
    def vector_bits(self) -> int:
        if self.has("avx512f"):
            return 512
        if self.has("avx2") or self.has("avx"):
            return 256
        return 128

    def lanes(self, elem_bits: int = 32) -> int:
        """How many elements of `elem_bits` fill one native vector register (16 f32 with AVX-512)."""
        return self.vector_bits // elem_bits


_ARCH = {"amd64": "x86_64", "arm64": "aarch64"}  # platform.machine()'s other names for LLVM's architectures


@functools.cache
def host() -> HostInfo:
    """The CPU code is generated for: this machine's, or the one IRC_CPU names (runtime/isa.py)."""
    spec = env.get("IRC_CPU")
    if spec == "native":
        facts = _machine()
        return HostInfo(facts["triple"], facts["cpu"], facts["features"])
    return HostInfo(*isa.resolve(spec))


@functools.cache
def _machine() -> dict:
    """compile_worker.host_facts(), asked of the worker where there is one (this process then need not load LLVM)."""
    with _lock:
        if env.get("IRC_COMPILE_DEADLINE") and not _no_worker:
            try:
                return worker().host()
            except (compile_worker.NoWorker, compile_worker.WorkerLost, TimeoutError):
                pass  # the first compile says why the worker is missing
        return compile_worker.host_facts()


@functools.cache
def last_level_cache() -> int:
    """Bytes of the largest CPU cache Linux lists for cpu 0 (usually the L3), or tuning.LAST_LEVEL_CACHE_FALLBACK
    where it lists none."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        with contextlib.suppress(OSError, ValueError):
            sizes.append(env.parse_size(f.read_text()))
    return max(sizes, default=tuning.LAST_LEVEL_CACHE_FALLBACK)


@functools.cache
def versions() -> str:
    try:
        from importlib.metadata import version

        irc_version = version("irc-compiler")
    except Exception:  # running from a checkout that is not installed
        irc_version = "0+unknown"
    return f"irc={irc_version};llvmlite={llvmlite.__version__};llvm={_machine()['llvm']}"


class CompiledModule:
    """Loaded machine code of one module; keep it alive as long as any of its functions may run."""

    def __init__(
        self, code, key: str, cache_hit: bool, seconds: float, optimized_ir: str | None, note: str | None = None
    ):
        self._code = code  # loader.SharedObject or loader.JitObject
        self.key = key
        self.cache_hit = cache_hit  # loaded from the on-disk cache: nothing was compiled
        self.seconds = seconds  # wall time of compile (or of the cache load)
        self.optimized_ir = optimized_ir  # None after a cache hit
        self.note = note  # for the compile report: the module was compiled at FALLBACK_OPT, and why
        self._funcs: dict = {}

    def address(self, name: str) -> int:
        addr = self._code.address(name)
        if not addr:
            raise KeyError(f"no function {name!r} in compiled module {self.key[:12]}")
        return addr

    def has(self, name: str) -> bool:
        return bool(self._code.address(name))

    def function(self, name: str, restype, *argtypes):
        """A ctypes function for `name`. ctypes drops the GIL around the call, so threads run in parallel."""
        sig = (name, restype, argtypes)
        if sig not in self._funcs:
            fn = ctypes.CFUNCTYPE(restype, *argtypes)(self.address(name))
            fn._irc_module = self  # the code must outlive every handle to it
            self._funcs[sig] = fn
        return self._funcs[sig]


class Engine:
    """Compiles modules for the host. `opt` is LLVM's speed level (0-3)."""

    def __init__(self, opt: int = 3):
        self.opt = opt
        self.host = host()
        # Intel tunings set prefer-256-bit, so the loop vectoriser would pick ymm even with AVX-512;
        # our kernels are long streaming loops where zmm wins, so lift it (explicit vectors use zmm anyway).
        self.features = self.host.features + (",-prefer-256-bit" if self.host.has("avx512f") else "")
        self.shared = self.host.runs_here and loader.shared_objects()  # else objects for MCJIT (loader.py)
        self._loaded: weakref.WeakValueDictionary[str, CompiledModule] = weakref.WeakValueDictionary()  # while alive

    @functools.cached_property
    def _tm(self):
        """The in-process TargetMachine (tests, tools, and compiling without a worker); used only under _lock."""
        return self._make_tm()

    def _make_tm(self):
        h = self.host
        return compile_worker.new_target_machine(h.triple, h.cpu, self.features, self.opt, self.shared)

    def key(self, ir_text: str) -> str:
        h, loading = self.host, "shared object" if self.shared else "mcjit"
        return cache.make_key(
            ir_text, h.triple, h.cpu, h.features, str(self.opt), loading, versions(), PIPELINE_VERSION
        )

    def fallback_key(self, key: str) -> str | None:
        """Where the FALLBACK_OPT object of the module keyed `key` is kept once its compile passed the deadline in
        force; None where there is no cheaper level or no deadline."""
        deadline = env.get("IRC_COMPILE_DEADLINE")
        if not deadline or self.opt <= FALLBACK_OPT:
            return None
        return cache.make_key(key, f"O{FALLBACK_OPT} after a deadline of {deadline:g} s")

    def _prepare(self, module: ir.Module | str) -> str:
        if isinstance(module, ir.Module):
            module.triple = self.host.triple  # the data layout is the target machine's (compile_worker.optimize)
        return str(module)

    def optimize(self, ir_text: str):
        """Parse and run the O`opt` pipeline in-process (compile_worker.optimize); the caller holds _lock."""
        return compile_worker.optimize(ir_text, self._tm, self.opt)

    def assembly(self, module: ir.Module | str) -> str:
        """Optimised machine assembly of a module, for tests that check vectorisation and for debugging."""
        with _lock:
            return self._tm.emit_assembly(self.optimize(self._prepare(module)))

    def object_code(self, module: ir.Module | str) -> bytes:
        """The optimised module as an ELF object for the host, not loaded (the only output for a foreign CPU)."""
        with _lock:
            return self._tm.emit_object(self.optimize(self._prepare(module)))

    def compile(self, module: ir.Module | str, *, use_cache: bool = True) -> CompiledModule:
        """Compile (or load from the caches) and return the loaded module; use_cache=False neither reads
        nor writes the disk cache (options={"cache": False}). Raises CompileTimeout where the module passed
        IRC_COMPILE_DEADLINE at both levels."""
        if not self.host.runs_here:
            raise ForeignCPU(f"irc: IRC_CPU targets {self.host.triple} ({self.host.cpu}): its code cannot run here")
        t0 = time.perf_counter()
        with _lock:
            text = self._prepare(module)
            key = self.key(text)
            lib = self.load(key) if use_cache else self._loaded.get(key)
            if lib is not None and (use_cache or not lib.cache_hit):  # without the cache, not what it gave earlier
                return lib
            obj, opt_ir, note = self._object(text, key)
            if use_cache:
                cache.put("obj", key if note is None else self.fallback_key(key), obj)
            lib = CompiledModule(self._load(obj), key, False, time.perf_counter() - t0, opt_ir, note)
            self._loaded[key] = lib
            return lib

    def _object(self, text: str, key: str) -> tuple[bytes, str, str | None]:
        """(object, optimised IR, the note of a fallback level or None): in the worker under the deadline, at
        `opt` and then at FALLBACK_OPT; in-process where there is no deadline or no worker."""
        h, deadline = self.host, env.get("IRC_COMPILE_DEADLINE")
        if deadline and not _no_worker:
            if (gave_up := _gave_up.get((key, deadline))) is not None:  # do not wait for it twice
                raise CompileTimeout(gave_up)
            hang, failed = env.get("IRC_TEST_COMPILE_HANG") or (), []
            for opt in dict.fromkeys((self.opt, min(self.opt, FALLBACK_OPT))):
                try:
                    obj, opt_ir = worker().compile(
                        text, h.triple, h.cpu, self.features, opt, deadline, f"O{opt}" in hang, self.shared
                    )
                except TimeoutError:
                    failed.append(f"O{opt} compile passed the {deadline:g} s deadline")
                except compile_worker.WorkerLost as e:
                    failed.append(f"O{opt} compile's worker died ({e})")
                except compile_worker.NoWorker as e:
                    _no_worker.append(str(e))
                    fallbacks_log.warning("irc: %s; compiling in-process, without a deadline", e)
                    break
                except compile_worker.CompileError as e:
                    raise RuntimeError(str(e)) from None
                else:
                    note = f"{'; '.join(failed)}; compiled at O{opt}" if failed else None
                    if note:
                        fallbacks_log.warning(
                            "irc: machine code of module %s: %s (IRC_COMPILE_DEADLINE)", key[:12], note
                        )
                    return obj, opt_ir, note
            else:
                why = _gave_up[key, deadline] = f"machine code of module {key[:12]}: {'; '.join(failed)}"
                raise CompileTimeout(why + " (IRC_COMPILE_DEADLINE)")
        obj, opt_ir = compile_worker.compile_object(text, h.triple, h.cpu, self.features, self.opt, self.shared)
        return obj, opt_ir, None

    def load(self, key: str) -> CompiledModule | None:
        """The module compiled earlier under `key` (CompiledModule.key), from this process or the disk cache (at
        FALLBACK_OPT where its compile passed the deadline); None when neither has it (an emission record of
        compiled.py names its object code this way)."""
        t0 = time.perf_counter()
        with _lock:
            if (lib := self._loaded.get(key)) is not None:
                return lib
            obj, note = cache.get("obj", key), None
            if obj is None and (fallback := self.fallback_key(key)) is not None:
                obj = cache.get("obj", fallback, counted=False)  # rare: not a miss of its own in the statistics
                note = f"compiled at O{FALLBACK_OPT} (an earlier O{self.opt} compile passed the deadline)"
            if obj is None:
                return None
            lib = CompiledModule(self._load(obj), key, True, time.perf_counter() - t0, None, note)
            self._loaded[key] = lib
            return lib

    def _load(self, blob: bytes):
        return loader.SharedObject(blob) if self.shared else loader.JitObject(blob, self._make_tm())


@functools.cache
def engine() -> Engine:
    """The process-wide O3 engine."""
    return Engine(opt=3)


def compile_module(module: ir.Module | str, *, use_cache: bool = True) -> CompiledModule:
    return engine().compile(module, use_cache=use_cache)
