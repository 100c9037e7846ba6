"""A graph compiled once for the CPU: what every call shares (executor.py runs the calls). Calls change one thing
in it: `extern_paths`, the record of which library path each extern problem took, filled as calls decide.

Every launch is specialised (affine-free ints where the graph is static, cells where not), emitted
into one LLVM module per graph (identical specialisations share one function) and JITed; a kernel
that cannot be emitted runs through the reference evaluator instead, and `fallbacks` says which and
why. Each launch is built in its Variant (vector width, tile, parallel threshold): the emitter's
defaults, unless max-autotune chose others (autotune.py returns Choices; `build(choices)` compiles
again with them). Under reduce-overhead a static graph also gets its launch plan (launcher.py) and
the launchers' code in the same module. Externs are prepared once (extern_ops.py).

Given `key` (the mem-stage cache's key of the module), a build keeps an emission record on disk: each launch's
function name and emitter plan and the object code's key, so that a warm start loads the object code without
emitting LLVM IR again (`llvm_ir` is then emitted only when asked for).
"""

from __future__ import annotations

import ctypes
import pickle
from dataclasses import dataclass, field

from llvmlite import ir

from irc import cache as disk

from ..codegen import tuning
from ..codegen.affine import Lin
from ..codegen.emit import BufSpec, emit_kernel
from ..codegen.tiles import DEFAULT_TILE, Tile, default_lanes
from ..codegen.types import Unsupported
from ..libs import extern_ops
from . import jit, launcher, parallel
from .graph import plan_graph

SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)  # void k(start, end, argv)


@dataclass(frozen=True)
class Variant:
    """How one launch is built: vector width (None: emit.default_lanes), parallel threshold in work units
    (None: parallel.MIN_WORK; 0: always split across torch's threads; SERIAL: never) and tile sizes (tiles.Tile)."""

    lanes: int | None = None
    min_work: int | None = None
    tile: Tile = DEFAULT_TILE


SERIAL = 1 << 62  # a min_work no launch reaches


@dataclass
class Choices:
    """Variants off the defaults (max-autotune's): one per launch, and MKL threads per native sgemm_
    (step index -> thread count)."""

    launches: list[Variant]
    mm_threads: dict[int, int] = field(default_factory=dict)


class Launch:
    """One launch step specialised (its kernel and parameters: `key`; the frame cells its argv points at) and,
    once built, its function name, emitter plan and callables (`fn`, and `par` on torch's threads where
    there is an OpenMP runtime), or the reason it runs on the reference."""

    def __init__(self, step, key, params, cells):
        self.step, self.key, self.params, self.cells = step, key, params, cells
        self.variant = Variant()
        self.fname, self.plan, self.reason, self.fn, self.par = None, None, None, None, None


class Compiled:
    """A mem-stage module's @main planned (graph.py), specialised, emitted and JITed; see the module docstring."""

    def __init__(
        self,
        module,
        args,
        *,
        entry: str = "main",
        lanes: int | None = None,
        mode: str = "default",
        key: str | None = None,
    ):
        self.module, self.g, self.mode, self.key = module, plan_graph(module, args, entry), mode, key
        self.lanes = lanes or jit.host().lanes(32)
        self.fixed: dict[tuple[int, int], int] = {}  # (arena root, byte offset) -> cell set once per context
        self.launches = [self._specialize(st) for st in self.g.steps if st.kind == "launch"]
        self.frame_cells = self.g.ncells + len(self.fixed)
        self.static = not self.g.sources and not self.g.checks
        self.min_work = parallel.MIN_WORK
        self.mm_threads: dict[int, int] = {}  # step index -> MKL threads for its native sgemm_ (Choices)
        self.fallbacks: list[tuple[str, str]] = []
        self.launch_plan: launcher.Plan | None = None  # reduce-overhead: who runs each step
        self.launcher_error: str | None = None  # why there is no launch plan, when it failed
        self.segments: list[str] = []  # the launchers' function names in `lib`
        self.lib, self.cache_hit, self.kernels, self._llvm_ir = None, False, 0, ""
        self._interp = None
        self.stable_args = frozenset(i for i, spec in enumerate(self.g.args) if spec.stable)
        self.externs: dict[int, extern_ops.Extern] = {}  # id(step) -> the extern, prepared after the first build
        self.extern_paths: dict[str, str] = {}  # extern problem -> the library path it took (filled as calls decide)

    def _specialize(self, st) -> Launch:
        g, name = self.g, st.op.callee.root_reference.data
        local: dict[int, int] = {}

        def loc(lin: Lin) -> Lin:
            return lin.renumber({c: local.setdefault(c, len(local)) for c in sorted(lin.cells())})

        params = []
        for buf in st.ins + st.outs:
            root = g.roots[buf.root]
            if root.kind == "arena" and buf.offset.static:
                key = (buf.root, buf.offset.const * buf.dtype.itemsize)
                cell, offset = self.fixed.setdefault(key, g.ncells + len(self.fixed)), Lin(0)
            else:
                cell, offset = root.cell, buf.offset
            ptr = local.setdefault(cell, len(local))
            params.append(BufSpec(buf.elem, tuple(map(loc, buf.sizes)), tuple(map(loc, buf.strides)), loc(offset), ptr))
        params += [loc(s) for s in st.syms]
        cells = sorted(local, key=local.get)
        return Launch(st, (name, repr(params)), params, cells)

    def note_path(self, problem: str, path: str) -> None:
        """Record the library path an extern problem took (externs and launchers decide it at their first call)."""
        self.extern_paths[problem] = path

    # -- variants ----------------------------------------------------------------------------------
    def default_lanes(self, ln: Launch) -> int:
        """The launch's vector width by default (emit.default_lanes)."""
        return default_lanes(self.g.kernels[ln.key[0]], self.lanes)

    def built_variant(self, ln: Launch) -> tuple:
        """(lanes, tile) the launch is emitted in: its variant's, the defaults where it has none."""
        return ln.variant.lanes or self.default_lanes(ln), ln.variant.tile

    def min_work_for(self, ln: Launch) -> int:
        """The launch's parallel threshold: its variant's, else the graph's."""
        return self.min_work if ln.variant.min_work is None else ln.variant.min_work

    def emit_kernels(self, mod: ir.Module, variant_of) -> list[tuple]:
        """Every launch's kernel into `mod` in the variant variant_of(launch) = (lanes, tile); launches that
        agree share a function. Per launch (function name, emitter plan), or (None, why) where the emitter could not."""
        names: dict = {}
        out = []
        for ln in self.launches:
            key = (*ln.key, *variant_of(ln))
            if key not in names:
                fname = f"k{len(names)}"
                try:
                    plan = emit_kernel(mod, fname, self.g.kernels[ln.key[0]], ln.params, *key[-2:])
                except Exception as e:  # noqa: BLE001 - any emitter failure: that kernel runs on the reference
                    for name in (fname, f"{fname}_body", f"{fname}_par"):
                        mod.globals.pop(name, None)
                    fname, plan = None, _reason(e)
                names[key] = (fname, plan)
            out.append(names[key])
        return out

    # -- building ----------------------------------------------------------------------------------
    def build(self, choices: Choices | None = None, *, cache: bool = True) -> None:
        """Emit and JIT every launch (in `choices`' variants when given) and the launchers; then the externs
        are prepared, once. Contexts made before a build run the old code: make new ones (Executor.reset)."""
        if choices is not None:
            for ln, variant in zip(self.launches, choices.launches, strict=True):
                ln.variant = variant
            self.mm_threads = dict(choices.mm_threads)
        record_key = self._record_key() if cache else None
        found = self._from_record(record_key) if record_key else None
        mod = None
        if found is None:
            mod = ir.Module("irc_graph")
            emitted = self.emit_kernels(mod, self.built_variant)
        else:
            lib, emitted = found
        self.fallbacks = [f for f in self.fallbacks if not f[0].startswith("kernel ")]
        for ln, (fname, plan) in zip(self.launches, emitted):
            ln.fname, ln.fn, ln.par = fname, None, None
            ln.plan, ln.reason = (plan, None) if fname else (None, plan)
            if fname is None:
                self.fallbacks.append((f"kernel {ln.step.op.callee.root_reference.data}", ln.reason))
        segments = []
        if mod is not None:
            self._llvm_ir = str(mod)  # what `irc-opt -t llvm` prints
            segments = self._launchers(mod) if self.mode != "default" and self.static else []  # over the kernels' names
            source = mod if segments else self._llvm_ir  # printing a large module is slow: once
            lib = jit.compile_module(source, use_cache=cache) if any(f for f, _ in emitted) or segments else None
            if lib is not None and record_key:
                disk.put("emitted", record_key, pickle.dumps({"obj": lib.key, "emitted": emitted}))
        if lib is not None:
            for ln in self.launches:
                if ln.fname:
                    ln.fn = lib.function(ln.fname, *SIG)
                    ln.par = lib.function(f"{ln.fname}_par", *parallel.PAR_SIG) if lib.has(f"{ln.fname}_par") else None
            self.lib, self.segments = lib, segments
            self.cache_hit, self.kernels = lib.cache_hit, len({ln.fname for ln in self.launches if ln.fname})
        else:
            self.cache_hit, self.kernels = False, 0
        if not self.externs:
            self.externs = {id(st): self._extern(st) for st in self.g.steps if st.kind == "extern"}

    @property
    def llvm_ir(self) -> str:
        """The graph's LLVM IR as emitted (emitted now when the build loaded its code through an emission record)."""
        if self._llvm_ir is None:
            mod = ir.Module("irc_graph")
            self.emit_kernels(mod, self.built_variant)
            self._llvm_ir = str(mod)
        return self._llvm_ir

    # -- the emission record (warm starts) -------------------------------------------------------
    def _record_key(self) -> str | None:
        """The key of this build's emission record: the module's, every launch's specialisation and variant, the
        host and the emitter's sources. None where there is none (no module key; launchers, which reduce-overhead
        and max-autotune emit with the kernels, are not recorded)."""
        if self.key is None or (self.mode != "default" and self.static):
            return None
        h = jit.host()
        launches = repr([(ln.key, self.built_variant(ln)) for ln in self.launches])
        return disk.make_key(
            "emitted",
            self.key,
            launches,
            str(self.lanes),
            str(parallel.runtime() is not None),
            f"prefetch={tuning.PREFETCH},{tuning.PREFETCH_MIN_BYTES},stream={tuning.STREAM_MIN_BYTES}",  # each changes the code
            h.triple,
            h.cpu,
            h.features,
            jit.versions(),
            disk.sources("targets/cpu", "ir", "dialects"),
        )

    def _from_record(self, key: str):
        """The object code an emission record names, loaded, with the record's `emitted` (per launch: function name
        and emitter plan, or None and the reason); None when the record or its object is missing or unreadable."""
        data = disk.get("emitted", key)
        if data is None:
            return None
        try:
            rec = pickle.loads(data)
            emitted = [tuple(e) for e in rec["emitted"]]
            if len(emitted) != len(self.launches):
                raise ValueError(f"{len(emitted)} launches recorded, {len(self.launches)} built")
        except Exception as e:  # noqa: BLE001 - the record is unusable: emit again
            disk.log.warning("emission record unusable (%s); emitting again", e)
            return None
        lib = jit.engine().load(rec["obj"])
        if lib is None:
            return None
        self._llvm_ir = None
        return lib, emitted

    def _launchers(self, mod) -> list[str]:
        """reduce-overhead: launchers over the emitted kernels (none, and the reason kept, if that fails)."""
        try:
            self.launch_plan = launcher.plan(self)
            return launcher.emit(self, mod, self.launch_plan)
        except Exception as e:  # noqa: BLE001 - the graph still runs, step by step
            for name in [n for n in mod.globals if n.startswith("seg")]:
                mod.globals.pop(name)
            self.launch_plan, self.launcher_error = None, f"no launcher: {type(e).__name__}: {e}"
            return []

    def _extern(self, st):
        def interpreter():
            if self._interp is None:
                from irc.targets.reference.memory import make_mem_interpreter

                self._interp = make_mem_interpreter(self.module)
            return self._interp

        ext, how = extern_ops.prepare(st.op, interpreter, self.note_path, self.stable_args)
        if how == "reference":
            inner = [o.name for o in st.op.body.block.ops][:-1]
            self.fallbacks.append((f"extern {', '.join(inner)}", "runs through the reference semantics"))
        return ext


def _reason(e: Exception) -> str:
    return str(e) if isinstance(e, Unsupported) else f"emitter error: {type(e).__name__}: {e}"


__all__ = ["Choices", "Compiled", "Launch", "SERIAL", "Variant"]
