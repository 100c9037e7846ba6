"""The CPU runtime: a graph prepared once, so that a call is a short, flat run of prepared callables.

At compile time every launch is specialised (affine-free ints where the graph is static, cells where
not), emitted into one LLVM module per graph (identical specialisations share one function) and
JITed; each kernel that cannot be emitted runs through the reference evaluator instead, and
`Program.fallbacks` says which and why. A *context* holds what one call mutates: the frame (the
int64 cells kernels read through their argv), the arena (allocated once, reused by every call),
the roots and the list of steps bound to them. A call then only checks and binds the arguments
(one struct.pack_into for the input addresses), runs the steps, and returns the outputs. Contexts
are pooled, so concurrent calls (threads) each get their own.

Modes: under reduce-overhead a static graph's steps also run as JITed launchers (launcher.py: a call is
then the allocation of its outputs and one or a few ctypes calls); max-autotune first measures each
launch's variants (autotune.py) and builds with the fastest. `python_steps` and `mode_notes` say what
a call runs.
"""

from __future__ import annotations

import ctypes
import struct
import time
from functools import partial

import torch
from llvmlite import ir

from . import alloc, autotune, extern_ops, jit, launcher, parallel, steps
from .affine import Lin
from .emit import BufSpec, emit_kernel
from .tiles import DEFAULT_TILE, Tile, default_lanes
from .steps import Ctx
from .graph import Buf, plan_graph
from .types import Unsupported

_SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
SHARED_FACTOR = 32  # parallel threshold multiplier in graphs that also run library (OpenMP) kernels


class InputMismatch(ValueError):
    """An argument differs from what the graph was compiled for (the message names it)."""


class _Launch:
    def __init__(self, step, key, params, cells):
        self.step, self.key, self.params, self.cells = step, key, params, cells
        self.fname, self.plan, self.reason, self.fn = None, None, None, None
        self.lanes: int | None = None  # max-autotune's vector width for this launch (None: Program.default_lanes)
        self.min_work: int | None = None  # max-autotune's parallel threshold (None: the program's)
        self.tile: Tile = DEFAULT_TILE  # max-autotune's tile sizes for this launch (tiles.Tile)


class Program:
    """`Program(module, argspecs)(args) -> results` for a mem-stage module (see graph.ArgSpec)."""

    def __init__(self, module, args, *, cache: bool = True, entry: str = "main", lanes: int | None = None,
                 mode: str = "default"):  # fmt: skip
        t0 = time.perf_counter()
        self.module, self.g, self.mode = module, plan_graph(module, args, entry), mode
        self.lanes = lanes or jit.host().lanes(32)
        self.fallbacks: list[tuple[str, str]] = []
        self.fixed: dict[tuple[int, int], int] = {}  # (arena root, byte offset) -> cell set once per context
        self.ncells = self.g.ncells
        self.launches = [self._specialize(i, st) for i, st in enumerate(self.g.steps) if st.kind == "launch"]
        # A graph that also calls library kernels shares the cores with torch's OpenMP threads, which spin
        # after each call: kernels then go parallel only when large, on a pool that does not spin back.
        if any(st.kind == "extern" for st in self.g.steps):
            self.parallel, self.min_work = steps.parallel_blocking, parallel.MIN_WORK * SHARED_FACTOR
        else:
            self.parallel, self.min_work = parallel.parallel_for, parallel.MIN_WORK
        self._static = not self.g.sources and not self.g.checks
        self.externs = {id(st): None for st in self.g.steps if st.kind == "extern"}  # prepared after the JIT
        self._native_plan, self._lib, self._segments, self._mode_error = None, None, [], None
        self.mm_threads: dict[int, int] = {}  # max-autotune: step index -> MKL threads for its native sgemm_
        self.cache_hit, self.kernels = self._compile(cache)
        self._interp = None
        self.externs = {id(st): self._extern(st) for st in self.g.steps if st.kind == "extern"}
        self._tensor_args = [(r.arg, r.cell) for r in self.g.roots if r.kind == "input"]
        self._pack = struct.Struct(f"<{len(self._tensor_args)}q")
        # results that are whole buffers this program allocates: they never share memory with an input
        self.fresh = [isinstance(r, Buf) and self.g.roots[r.root].kind == "alloc" and self.g.roots[r.root].buf is r
                      for r in self.g.returns]  # fmt: skip
        self._free: list = []
        from torch._subclasses.fake_tensor import unset_fake_temporarily

        with unset_fake_temporarily():  # compiling runs under Dynamo's fake mode: the arena must be real
            self._free.append(self._context())
            tuned, tune_notes = (False, [])
            if mode == "max-autotune" and self._static and (self.kernels or self._native_plan):
                try:
                    tuned, tune_notes = autotune.tune(self, cache)
                except Exception as e:  # noqa: BLE001 - measuring failed: the default variants stay
                    tune_notes = [f"autotune failed ({type(e).__name__}: {e}); default variants"]
                    for ln in self.launches:
                        ln.lanes = ln.min_work = None
                        ln.tile = DEFAULT_TILE
                    self.mm_threads.clear()
            if tuned:  # other widths, tiles or thresholds than the first build's: build again with them
                self.rebuild(cache)
        cx = self._free[0]
        self.python_steps = len(cx.fast.steps if cx.fast is not None else cx.steps)  # a launcher counts as one
        self.mode_notes = ([self._mode_error] if self._mode_error else launcher.describe(self)) + tune_notes
        self.seconds = time.perf_counter() - t0

    # -- compile time ------------------------------------------------------------------------------
    def _specialize(self, index, st) -> _Launch:
        g, name = self.g, st.op.callee.root_reference.data
        local: dict[int, int] = {}

        def loc(lin: Lin) -> Lin:
            return lin.renumber({c: local.setdefault(c, len(local)) for c in sorted(lin.cells())})

        params = []
        for buf in st.ins + st.outs:
            root = g.roots[buf.root]
            if root.kind == "arena" and buf.offset.static:
                key = (buf.root, buf.offset.const * buf.dtype.itemsize)
                cell, offset = self.fixed.setdefault(key, self.ncells + len(self.fixed)), Lin(0)
            else:
                cell, offset = root.cell, buf.offset
            ptr = local.setdefault(cell, len(local))
            params.append(BufSpec(buf.elem, tuple(map(loc, buf.sizes)), tuple(map(loc, buf.strides)), loc(offset), ptr))
        params += [loc(s) for s in st.syms]
        cells = sorted(local, key=local.get)
        return _Launch(st, (name, repr(params)), params, cells)

    def emit_kernels(self, mod: ir.Module, variant_of) -> None:
        """Every launch's kernel into `mod` in the variant variant_of(launch) = (lanes, tile) (launches that
        agree share a function); sets each launch's fname and plan (fname None, plan the reason: the emitter
        could not)."""
        names: dict = {}
        for ln in self.launches:
            key = (*ln.key, *variant_of(ln))
            if key not in names:
                fname = f"k{len(names)}"
                try:
                    plan = emit_kernel(mod, fname, self.g.kernels[ln.key[0]], ln.params, *key[-2:])
                except Exception as e:  # noqa: BLE001 - any emitter failure: that kernel runs on the reference
                    mod.globals.pop(fname, None)
                    fname, plan = None, _reason(e)
                names[key] = (fname, plan)
            ln.fname, ln.plan = names[key]

    def default_lanes(self, ln: _Launch) -> int:
        """The launch's vector width unless max-autotune set one (emit.default_lanes)."""
        return default_lanes(self.g.kernels[ln.key[0]], self.lanes)

    def rebuild(self, cache: bool = True) -> None:
        """Compile again after launches' variants (lanes, tile, min_work) changed; calls then run the new code."""
        self.cache_hit, self.kernels = self._compile(cache)
        self._free = [self._context()]

    def _compile(self, cache: bool):
        mod = ir.Module("irc_graph")
        self.emit_kernels(mod, lambda ln: (ln.lanes or self.default_lanes(ln), ln.tile))
        self.fallbacks = [f for f in self.fallbacks if not f[0].startswith("kernel ")]
        for ln in self.launches:
            ln.reason = ln.fn = None
            if ln.fname is None:
                ln.reason, ln.plan = ln.plan, None
                self.fallbacks.append((f"kernel {ln.step.op.callee.root_reference.data}", ln.reason))
        self.llvm_ir = str(mod)  # what `irc-opt -t llvm` prints
        segs = self._launchers(mod) if self.mode != "default" and self._static else []
        if not any(ln.fname for ln in self.launches) and not segs:
            return False, 0
        lib = jit.compile_module(mod, use_cache=cache)
        self._segments = segs
        for ln in self.launches:
            if ln.fname:
                ln.fn = lib.function(ln.fname, *_SIG)
        self._lib = lib
        return lib.cache_hit, len({ln.fname for ln in self.launches if ln.fname})

    def _launchers(self, mod) -> list[str]:
        """reduce-overhead: launchers over the emitted kernels (none, and a note, if that fails)."""
        try:
            self._native_plan = launcher.plan(self)
            return launcher.emit(self, mod, self._native_plan)
        except Exception as e:  # noqa: BLE001 - the graph still runs, step by step
            for name in [n for n in mod.globals if n.startswith("seg")]:
                mod.globals.pop(name)
            self._native_plan, self._mode_error = None, f"no launcher: {type(e).__name__}: {e}"
            return []

    def _extern(self, st):
        def interpreter():
            if self._interp is None:
                from irc.targets.reference.memory import make_mem_interpreter

                self._interp = make_mem_interpreter(self.module)
            return self._interp

        run, how = extern_ops.prepare(st.op, interpreter)
        if how == "reference":
            inner = [o.name for o in st.op.body.block.ops][:-1]
            self.fallbacks.append((f"extern {', '.join(inner)}", "runs through the reference semantics"))
        return run

    # -- contexts: what one call mutates -----------------------------------------------------------
    def _context(self):
        g = self.g
        cx = Ctx(self.ncells + len(self.fixed), len(g.roots))
        for r, root in enumerate(g.roots):
            if root.kind == "arena":
                t = alloc.empty((max(root.nbytes, 8),), (1,), torch.uint8)
                cx.roots[r] = t
                cx.set(root.cell, t.data_ptr())
        for (r, off), c in self.fixed.items():
            cx.set(c, cx.vals[g.roots[r].cell] + off)
        base = ctypes.addressof(cx.frame)
        steps = iter(self.launches)
        bound = {}
        for i, st in enumerate(g.steps):
            ln = next(steps) if st.kind == "launch" else None
            step = bound[i] = self._bind_step(cx, st, ln, base)
            if ln is not None and ln.fn is not None:
                cx.argv[i] = ctypes.addressof(cx.keep[-1])
            if step is not None:
                cx.steps.append(step)
                cx.names.append(_describe(st, ln))
        cx.per_call = [r for r, root in enumerate(g.roots) if root.kind != "arena"]
        if self._native_plan is not None:
            try:
                cx.fast = launcher.Bound(self, cx, bound, self._lib, self._segments)
            except Exception as e:  # noqa: BLE001 - this context runs its steps one by one
                self._mode_error = f"no launcher: {type(e).__name__}: {e}"
        return cx

    def _bind_step(self, cx, st, ln, base):
        vals, g = cx.vals, self.g
        if st.kind == "derive":
            return partial(steps.derive, cx, st.cell, st.fn)
        if st.kind == "alloc":
            buf = g.roots[st.root].buf
            if all(s.static for s in buf.sizes + buf.strides):
                shape, strides = tuple(s.const for s in buf.sizes), tuple(s.const for s in buf.strides)
                return partial(steps.alloc_static, cx.roots, st.root, cx.frame, g.roots[st.root].cell, shape, strides, buf.dtype)
            return partial(steps.alloc_dynamic, cx, st.root, g.roots[st.root].cell, buf.sizes, buf.strides, buf.dtype)
        if st.kind == "extern":
            return partial(steps.extern, cx, self, st, self.externs[id(st)])
        if ln.fn is None:
            return partial(steps.reference_launch, cx, self, st)
        argv = (ctypes.c_void_p * max(1, len(ln.cells)))(*[base + 8 * c for c in ln.cells])
        cx.keep.append(argv)
        addr = ctypes.addressof(argv)
        count = steps.counter(ln.plan, st.syms)
        if isinstance(count, tuple):
            items, work = count
            if items <= 0:
                return None
            mw = self.min_work if ln.min_work is None else ln.min_work
            if items * work < mw:
                return partial(ln.fn, 0, items, addr)
            return partial(self.parallel, ln.fn, 0, items, addr, work_per_item=work, align=1, min_work=mw)
        return partial(steps.dynamic_launch, vals, ln.fn, addr, count, self.parallel, self.min_work)

    # -- a call ------------------------------------------------------------------------------------
    def __call__(self, args) -> list:
        try:
            cx = self._free.pop()
        except IndexError:
            cx = self._context()
        try:
            self._bind(cx, args)
            fast = cx.fast
            if fast is None:
                for step in cx.steps:
                    step()
            elif fast.pool is None:
                for step in fast.steps:
                    step()
            elif fast.usable() and fast.pool._busy.acquire(blocking=False):  # the launchers publish pool tasks
                try:
                    for step in fast.steps:
                        step()
                finally:
                    fast.pool._busy.release()
            else:  # the pool is busy (another thread's call) or was replaced: the Python steps
                for step in cx.steps:
                    step()
            return [self._result(cx, r) for r in self.g.returns]
        finally:
            for r in cx.per_call:
                cx.roots[r] = None
            self._free.append(cx)

    def profile(self, args, reps: int = 5) -> list[tuple[str, float]]:
        """(step, median seconds over `reps` calls) for every step: where a graph's time goes."""
        import statistics

        cx = self._context()
        times: list[list[float]] = [[] for _ in cx.steps]
        for _ in range(reps):
            self._bind(cx, args)
            for i, step in enumerate(cx.steps):
                t0 = time.perf_counter()
                step()
                times[i].append(time.perf_counter() - t0)
        return [(name, statistics.median(t)) for name, t in zip(cx.names, times)]

    def _bind(self, cx, args) -> None:
        specs = self.g.args
        if len(args) != len(specs):
            raise InputMismatch(f"irc: the graph takes {len(specs)} arguments, got {len(args)}")
        roots, ptrs = cx.roots, []
        for r, (i, _) in enumerate(self._tensor_args):
            t, s = args[i], specs[i]
            if not (isinstance(t, torch.Tensor) and t.dtype is s.dtype and t.is_cpu and t.shape == s.sizes
                    and t.stride() == s.strides) or not self._static:  # fmt: skip
                _check(t, s, i)
            roots[r] = t
            ptrs.append(t.data_ptr())
        self._pack.pack_into(cx.frame, 0, *ptrs)
        if not self._static:
            self._bind_symbols(cx, args)

    def _bind_symbols(self, cx, args) -> None:
        g, vals = self.g, cx.vals
        for r, (_, c) in enumerate(self._tensor_args):
            vals[c] = cx.frame[c]
        weak = set()  # cells bound from the stride of a size-1 dim: a meaningless value, which a real one replaces
        for c, where in g.sources.items():
            cx.set(c, _where(args, where))
            if _unit_stride(args, where):
                weak.add(c)
        for c, where in g.checks:
            if _unit_stride(args, where):  # never used to address an element: any value is right
                continue
            if c in weak:
                cx.set(c, _where(args, where))
                weak.discard(c)
            elif _where(args, where) != vals[c]:
                kind, i = where[0], where[1]
                what = f"{kind} of dim {where[2]}" if kind != "index" else "value"
                raise InputMismatch(f"irc: argument {i} ({g.args[i].name}): {what} is {_where(args, where)}, "
                                    f"but the same symbol was bound to {vals[c]} by an earlier argument")  # fmt: skip

    def _result(self, cx, r):
        if isinstance(r, Lin):
            return r.eval(cx.vals)
        root = self.g.roots[r.root]
        if root.buf is r:
            return cx.roots[r.root]
        return steps.tensor_of(cx, r)


def _where(args, where):
    kind, i = where[0], where[1]
    if kind == "index":
        return int(args[i])
    t = args[i]
    return t.shape[where[2]] if kind == "size" else t.stride(where[2])


def _unit_stride(args, where) -> bool:
    """`where` is the stride of a dim of size 1 (or of an empty tensor): it addresses nothing."""
    if where[0] != "stride":
        return False
    t = args[where[1]]
    return t.shape[where[2]] == 1 or t.numel() == 0


def _check(t, s, i: int) -> None:
    """The slow path of the entry check: raise InputMismatch naming argument i, or accept (size-1 dims
    may have any stride; symbolic sizes and strides are bound by _bind_symbols)."""
    who = f"irc: argument {i} ({s.name})"
    if not isinstance(t, torch.Tensor):
        raise InputMismatch(f"{who} must be a tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise InputMismatch(f"{who} is on {t.device}; the graph was compiled for the CPU")
    if t.dtype != s.dtype:
        raise InputMismatch(f"{who} has dtype {t.dtype}; the graph was compiled for {s.dtype}")
    if t.dim() != len(s.sizes):
        raise InputMismatch(f"{who} has {t.dim()} dims; the graph was compiled for {len(s.sizes)}")
    for d, (n, want) in enumerate(zip(t.shape, s.sizes)):
        if isinstance(want, int) and n != want:
            raise InputMismatch(f"{who} has size {tuple(t.shape)}; the graph was compiled for {tuple(s.sizes)}")
    if t.numel() == 0:
        return
    for d, (n, st, want) in enumerate(zip(t.shape, t.stride(), s.strides)):
        if n != 1 and isinstance(want, int) and st != want:
            raise InputMismatch(f"{who} has strides {t.stride()}; the graph was compiled for {tuple(s.strides)}")


def _describe(st, ln) -> str:
    if st.kind == "launch":
        how = f"JITed {ln.fname}" if ln.fn is not None else "reference"
        return f"launch {st.op.callee.root_reference.data} ({how})"
    if st.kind == "extern":
        return "extern " + ", ".join(o.name for o in list(st.op.body.block.ops)[:-1])
    return st.kind


def _reason(e: Exception) -> str:
    return str(e) if isinstance(e, Unsupported) else f"emitter error: {type(e).__name__}: {e}"


__all__ = ["Program", "InputMismatch"]
