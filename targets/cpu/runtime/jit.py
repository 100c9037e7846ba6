"""In-process JIT for the host CPU: llvmlite.ir.Module -> optimised object code -> callable addresses.

    mod = ir.Module(); ... build functions with IRBuilder ...
    lib = compile_module(mod)                       # or Engine(opt=3).compile(mod)
    fn = lib.function("k", None, c_int64, c_int64, c_void_p)
    fn(0, n, buf.data_ptr())                        # ctypes releases the GIL during the call

How: the module text is optimised with LLVM's new pass manager at O3 (loop and SLP vectorisation on)
for the host triple, CPU and features, emitted as an ELF object by a TargetMachine, and loaded into a
fresh MCJIT engine with `add_object_file`. Compiling to an object ourselves (instead of letting MCJIT
codegen) makes the on-disk cache trivial: the object bytes are the cache entry, keyed by the IR text,
the CPU, its features, the optimisation level and the irc/llvmlite/LLVM versions (irc/cache.py, which
verifies every entry before it is loaded). A process that loads from the cache parses no IR and runs no pass.

The host is this machine unless IRC_CPU names another CPU (runtime/isa.py): an x86-64 level or CPU that this
machine can run, or an aarch64 one whose code is only generated (Engine.object_code; compile raises ForeignCPU).

One engine per compiled module keeps symbol names private to it (two kernels may both be called
"kernel") and lets a module be freed with its CompiledModule: the Engine shares a module compiled
earlier in the process only while something holds it (weakly referenced), so the machine code of
graphs Dynamo dropped (torch._dynamo.reset()) is released with them. LLVM's global context is not
thread-safe, so compilation holds one lock; calling compiled code needs none.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
from llvmlite import ir

from irc import cache, env

from . import isa, tuning

PIPELINE_VERSION = "1"  # bump when the pass pipeline or object loading changes meaning

_lock = threading.RLock()


@functools.cache
def _init_llvm() -> None:
    # llvm.initialize() raises in llvmlite 0.50; the native target and printer are all we need.
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.check_jit_execution()


class ForeignCPU(RuntimeError):
    """IRC_CPU names a CPU of another architecture: irc generates its code but cannot run it here."""


@dataclass(frozen=True)
class HostInfo:
    """The machine code is generated for: triple, CPU name, LLVM feature string, vector width."""

    triple: str
    cpu: str
    features: str

    @property
    def runs_here(self) -> bool:
        """This process can run the code (the triple's architecture is the process's)."""
        return self.triple.split("-")[0] == llvm.get_process_triple().split("-")[0]

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


@functools.cache
def host() -> HostInfo:
    """The CPU code is generated for: this machine's, or the one IRC_CPU names (runtime/isa.py)."""
    _init_llvm()
    spec = env.get("IRC_CPU")
    if spec == "native":
        return HostInfo(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    return HostInfo(*isa.resolve(spec))


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
    return f"irc={irc_version};llvmlite={llvmlite.__version__};llvm={llvm.llvm_version_info}"


class CompiledModule:
    """Loaded machine code of one module; keep it alive as long as any of its functions may run."""

    def __init__(self, engine, key: str, cache_hit: bool, seconds: float, optimized_ir: str | None):
        self._engine = engine
        self.key = key
        self.cache_hit = cache_hit  # loaded from the on-disk cache: nothing was compiled
        self.seconds = seconds  # wall time of compile (or of the cache load)
        self.optimized_ir = optimized_ir  # None after a cache hit
        self._funcs: dict = {}

    def address(self, name: str) -> int:
        addr = self._engine.get_function_address(name)
        if not addr:
            raise KeyError(f"no function {name!r} in compiled module {self.key[:12]}")
        return addr

    def has(self, name: str) -> bool:
        return bool(self._engine.get_function_address(name))

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
        _init_llvm()
        self.opt = opt
        self.host = host()
        self._target = llvm.Target.from_triple(self.host.triple)
        self._tm = self._make_tm()  # used only under _lock
        self._loaded: weakref.WeakValueDictionary[str, CompiledModule] = weakref.WeakValueDictionary()  # while alive

    def _make_tm(self):
        # Intel tunings set prefer-256-bit, so the loop vectoriser would pick ymm even with AVX-512;
        # our kernels are long streaming loops where zmm wins, so lift it (explicit vectors use zmm anyway).
        features = self.host.features + (",-prefer-256-bit" if self.host.has("avx512f") else "")
        # jitdefault = large code model on x86-64: the loaded sections may land anywhere in memory.
        return self._target.create_target_machine(
            cpu=self.host.cpu, features=features, opt=self.opt, codemodel="jitdefault", jit=True
        )

    def key(self, ir_text: str) -> str:
        h = self.host
        return cache.make_key(ir_text, h.triple, h.cpu, h.features, str(self.opt), versions(), PIPELINE_VERSION)

    def _prepare(self, module: ir.Module | str) -> str:
        if isinstance(module, ir.Module):
            module.triple = self.host.triple
            module.data_layout = str(self._tm.target_data)
        return str(module)

    def optimize(self, ir_text: str) -> llvm.ModuleRef:
        """Parse and run the O`opt` pipeline (vectorisers on); the caller holds _lock. The module gets its own
        LLVM context, freed with it (the global one would keep every module's constants and types for good)."""
        ref = llvm.parse_assembly(ir_text, llvm.create_context())
        ref.triple = self.host.triple
        ref.data_layout = str(self._tm.target_data)
        ref.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=self.opt)
        pto.loop_vectorization = self.opt >= 2
        pto.slp_vectorization = self.opt >= 2
        pto.loop_interleaving = self.opt >= 2
        pto.loop_unrolling = self.opt >= 2
        pb = llvm.create_pass_builder(self._tm, pto)
        pb.getModulePassManager().run(ref, pb)
        return ref

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
        nor writes the disk cache (options={"cache": False})."""
        if not self.host.runs_here:
            raise ForeignCPU(f"irc: IRC_CPU targets {self.host.triple} ({self.host.cpu}): its code cannot run here")
        t0 = time.perf_counter()
        with _lock:
            text = self._prepare(module)
            key = self.key(text)
            lib = self.load(key) if use_cache else self._loaded.get(key)
            if lib is not None and (use_cache or not lib.cache_hit):  # without the cache, not what it gave earlier
                return lib
            ref = self.optimize(text)
            opt_ir = str(ref)
            obj = self._tm.emit_object(ref)
            if use_cache:
                cache.put("obj", key, obj)
            lib = CompiledModule(self._load(obj), key, False, time.perf_counter() - t0, opt_ir)
            self._loaded[key] = lib
            return lib

    def load(self, key: str) -> CompiledModule | None:
        """The module compiled earlier under `key` (CompiledModule.key), from this process or the disk cache; None
        when neither has it (an emission record of compiled.py names its object code this way)."""
        t0 = time.perf_counter()
        with _lock:
            if (lib := self._loaded.get(key)) is not None:
                return lib
            obj = cache.get("obj", key)
            if obj is None:
                return None
            lib = CompiledModule(self._load(obj), key, True, time.perf_counter() - t0, None)
            self._loaded[key] = lib
            return lib

    def _load(self, obj: bytes):
        ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self._make_tm())
        ee.add_object_file(llvm.ObjectFileRef.from_data(obj))
        ee.finalize_object()
        return ee


@functools.cache
def engine() -> Engine:
    """The process-wide O3 engine."""
    return Engine(opt=3)


def compile_module(module: ir.Module | str, *, use_cache: bool = True) -> CompiledModule:
    return engine().compile(module, use_cache=use_cache)
