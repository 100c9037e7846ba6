"""Calls of a compiled graph (compiled.py): a call is a short, flat run of prepared callables.

A *context* holds what one call mutates: the frame (the int64 cells kernels read through their argv),
the arena (allocated once, reused by every call), the roots and the steps bound to them. A call only
checks and binds the arguments (one struct.pack_into for the input addresses), runs the context's
calls and returns the outputs. Contexts are pooled, so concurrent calls (threads) each get their own.
Under reduce-overhead a context's calls are the launchers over its steps (launcher.bind: the
allocation of the outputs and one or a few ctypes calls); otherwise they are the steps themselves.

While torch.profiler records (one flag read per call), a call runs the context's `recorded` calls instead:
the same callables, each inside a profiler event: a launch under its kernel's name ("irc::graph3.kernel0"),
an extern under its op and library path ("irc::graph3.tn.mm (mkldnn_packed)"), a launcher under the
kernels it runs ("irc::graph3.seg0 [kernel0, tn.mm sgemm_, kernel1]"). The torch ops an extern calls nest
inside its event.
"""

from __future__ import annotations

import ctypes
import struct
import time
from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

import torch
import torch.autograd.profiler as torch_profiler  # _is_profiler_enabled: True while a torch.profiler records
from torch._C._profiler import _RecordFunctionFast

from irc.targets.runtime import is_dense

from ..codegen.affine import Lin
from ..libs import extern_ops
from . import alloc, call_source, launcher, parallel, steps
from .graph import Buf
from .steps import Ctx


class InputMismatch(ValueError):
    """An argument differs from what the graph was compiled for (the message names it)."""


class Executor:
    """`Executor(compiled)(args) -> results`: runs calls of one Compiled (built) on pooled contexts. `name`
    ("graph3") prefixes its profiler events' names."""

    def __init__(self, compiled, name: str = ""):
        self.compiled = compiled
        self._events = f"irc::{name}." if name else "irc::"
        g = compiled.g
        # what every call reads, one attribute away (a call's overhead is a few attribute lookups)
        self._specs, self._static, self._roots, self._returns = g.args, compiled.static, g.roots, g.returns
        self._tensor_args = [(r.arg, r.cell) for r in g.roots if r.kind == "input"]
        self._pack = struct.Struct(f"<{len(self._tensor_args)}q")
        # results that are whole buffers this program or a product's library call allocates: they never share memory
        # with an input (other externs' results may be views of one: a reshape's, an eager fallback's)
        fresh_roots = {r for r, root in enumerate(g.roots) if root.kind == "alloc"} | {
            root for st in g.steps if st.kind == "extern" and extern_ops.allocates(st.op) for root, _ in st.results
        }
        self.fresh = [isinstance(r, Buf) and r.root in fresh_roots and g.roots[r.root].buf is r for r in g.returns]
        self.result_strides = [
            _dense_static_strides(r, g.roots[r.root]) if isinstance(r, Buf) else None for r in g.returns
        ]
        self.launcher_error: str | None = None  # why a context runs its steps one by one under reduce-overhead
        self.reset()

    def rebuild(self, choices=None, *, cache: bool = True) -> None:
        """Compile the graph again (in `choices`' variants when given, compiled.Choices); calls then run the new code."""
        self.compiled.build(choices, cache=cache)
        self.reset()

    def reset(self) -> None:
        """Drop the pooled contexts, so that calls run what the compiled graph holds now (after a build)."""
        self.call_source: str | None = None  # a call as one Python function (call_source.py), where one is written
        self._code = None
        cx = self.context()
        self._free = [cx]
        self.python_steps = len(cx.calls)  # the Python-level callables a call runs (a launcher counts as one)

    # -- contexts: what one call mutates -----------------------------------------------------------
    @contextmanager
    def pooled_context(self):
        """A context of the pool, the one calls run on, lent for measuring (max-autotune's launch variants): a context
        of its own would touch a second arena, which stays in the process's peak memory (BERT-base 1x128: 55 MB).
        Its per-call results are dropped when it comes back."""
        try:
            cx = self._free.pop()
        except IndexError:
            cx = self.context()
        try:
            yield cx
        finally:
            for r in cx.per_call:
                cx.roots[r] = None
            self._free.append(cx)

    def context(self) -> Ctx:
        """A new context: its arena allocated, every step bound to it (and the launchers, where planned)."""
        c, g = self.compiled, self.compiled.g
        cx = Ctx(c.frame_cells, len(g.roots))
        for r, root in enumerate(g.roots):
            if root.kind == "arena":
                t = alloc.empty((max(root.nbytes, 8),), (1,), torch.uint8)
                cx.roots[r] = t
                cx.set(root.cell, t.data_ptr())
        for (r, off), cell in c.fixed.items():
            cx.set(cell, cx.vals[g.roots[r].cell] + off)
        base = ctypes.addressof(cx.frame)
        launches = iter(c.launches)
        bound, events = {}, {}  # step index -> its callable; id(callable) -> it as a profiler event
        dead, pending = g.dead_after(), []
        for i, st in enumerate(g.steps):
            ln = next(launches) if st.kind == "launch" else None
            step = bound[i] = self._bind_step(cx, st, ln, base)
            if ln is not None and ln.fn is not None:
                cx.argv[i] = ctypes.addressof(cx.keep[-1])
            pending += dead.get(i, [])
            if step is not None:
                cx.steps.append(step)
                cx.names.append(_describe(st, ln))
                events[id(step)] = self._event(cx, st, ln, step)
                cx.dead.append(pending)  # dropped after this step (a skipped step's with the next one run)
                pending = []
        cx.per_call = [r for r, root in enumerate(g.roots) if root.kind != "arena"]
        if c.launch_plan is not None:
            try:
                cx.calls, cx.guard = launcher.bind(c, cx, bound)
                self._note_launcher_mms()
            except Exception as e:  # noqa: BLE001 - this context runs its steps one by one
                self.launcher_error = f"no launcher: {type(e).__name__}: {e}"
        if cx.calls is cx.steps:
            if self._code is None:
                self.call_source, names = call_source.write(c, bound)
                self._code = compile(self.call_source, f"<irc {self._events[5:-1] or 'graph'} call>", "exec"), names
            cx.call = call_source.bind(*self._code, cx, bound, lambda args: self._run(cx, args))
        segments = enumerate(c.launch_plan.segments if cx.calls is not cx.steps else ())
        cx.recorded = Recorded(
            [events[id(f)] if id(f) in events else self._segment_event(*next(segments), f) for f in cx.calls],
            [events[id(f)] for f in cx.steps],
            cx.guard,
        )
        return cx

    # -- profiler events -----------------------------------------------------------------------------
    def _event(self, cx, st, ln, step):
        """`step` as a profiler event: a launch under its kernel's name, an extern under its op and path."""
        if st.kind == "extern":
            return partial(
                steps.extern,
                cx,
                self.compiled.g,
                st,
                partial(_extern_event, self._events, self.compiled.externs[id(st)]),
            )
        if st.kind == "launch":
            kernel = st.op.callee.root_reference.data
            return partial(
                _event, self._events + (kernel if ln.fn is not None else f"{kernel} (reference evaluator)"), step
            )
        return partial(_event, self._events + st.kind, step)

    def _segment_event(self, s, seg, call):
        """A launcher as a profiler event named by the kernels (and native matmuls) it runs."""
        g = self.compiled.g
        what = [g.steps[w[1]].op.callee.root_reference.data if w[0] == "launch" else "tn.mm sgemm_" for w in seg]
        return partial(_event, f"{self._events}{self.compiled.segments[s]} [{', '.join(what)}]", call)

    def _note_launcher_mms(self) -> None:
        """The launchers' matmuls (MKL's sgemm_ from native code) in the compiled graph's extern paths."""
        c = self.compiled
        for i in (w[1] for seg in c.launch_plan.segments for w in seg if w[0] == "mm"):
            a, b = c.g.steps[i].ins
            shape = [tuple(q.const for q in buf.sizes) for buf in (a, b)]
            threads = c.mm_threads.get(i)
            path = f"sgemm_ ({threads} MKL thread{'s' * (threads > 1)})" if threads else "sgemm_"
            c.note_path(extern_ops.mm_problem(*shape, a.dtype, "in a launcher"), path)

    def _bind_step(self, cx, st, ln, base):
        c = self.compiled
        if st.kind == "derive":
            return partial(steps.derive, cx, st.cell, st.fn, *st.ins)
        if st.kind == "alloc":
            root = c.g.roots[st.root]
            buf = root.buf
            if all(s.static for s in buf.sizes + buf.strides):
                shape, strides = tuple(s.const for s in buf.sizes), tuple(s.const for s in buf.strides)
                return partial(steps.alloc_static, cx.roots, st.root, cx.frame, root.cell, shape, strides, buf.dtype)
            return partial(steps.alloc_dynamic, cx, st.root, root.cell, buf.sizes, buf.strides, buf.dtype)
        if st.kind == "extern":
            return partial(steps.extern, cx, c.g, st, c.externs[id(st)].run)
        if ln.fn is None:
            return partial(steps.reference_launch, cx, c.g, st)
        argv = (ctypes.c_void_p * max(1, len(ln.cells)))(*[base + 8 * cell for cell in ln.cells])
        cx.keep.append(argv)
        addr = ctypes.addressof(argv)
        count = steps.counter(ln.plan, st.syms)
        if isinstance(count, tuple):
            items, work = count
            if items <= 0:
                return None
            mw = c.min_work_for(ln)
            if items * work < mw or ln.par is None:
                return partial(ln.fn, 0, items, addr)
            return partial(parallel.launch, ln.fn, ln.par, items, addr, work, mw)
        return partial(steps.dynamic_launch, cx.vals, ln.fn, ln.par, addr, count, c.min_work)

    # -- a call ------------------------------------------------------------------------------------
    def __call__(self, args) -> list:
        try:
            cx = self._free.pop()
        except IndexError:
            cx = self.context()
        try:
            if cx.call is not None and not torch_profiler._is_profiler_enabled:
                return cx.call(args)
            return self._run(cx, args)
        finally:
            self._free.append(cx)

    def _run(self, cx: Ctx, args) -> list:
        """A call step by step: under the profiler, with launchers, or with arguments the generated call leaves."""
        try:
            self.bind(cx, args)
            run = cx.recorded if torch_profiler._is_profiler_enabled else cx
            if run.guard is not None:  # launchers that may go parallel: torch's thread count for this call
                run.guard.claim()
            if cx.calls is cx.steps:  # step by step (no launchers): drop each buffer after its last use
                roots = cx.roots
                for step, dead in zip(run.calls, cx.dead):
                    step()
                    for r in dead:
                        roots[r] = None
            else:
                for step in run.calls:
                    step()
            return [self._result(cx, r) for r in self._returns]
        finally:
            for r in cx.per_call:
                cx.roots[r] = None

    def profile(self, args, reps: int = 5) -> list[tuple[str, float]]:
        """(step, median seconds over `reps` calls) for every step: where a graph's time goes."""
        import statistics

        cx = self.context()
        times: list[list[float]] = [[] for _ in cx.steps]
        self.bind(cx, args)
        for step in cx.steps:  # once untimed: a first call faults in its fresh buffers (8 MB: several ms)
            step()
        for _ in range(reps):
            self.bind(cx, args)
            for i, step in enumerate(cx.steps):
                t0 = time.perf_counter()
                step()
                times[i].append(time.perf_counter() - t0)
        return [(name, statistics.median(t)) for name, t in zip(cx.names, times)]

    def bind(self, cx: Ctx, args) -> None:
        """Check `args` against what the graph was compiled for (InputMismatch) and bind them to `cx`."""
        specs, static = self._specs, self._static
        if len(args) != len(specs):
            raise InputMismatch(f"irc: the graph takes {len(specs)} arguments, got {len(args)}")
        roots, ptrs = cx.roots, []
        for r, (i, _) in enumerate(self._tensor_args):
            t, s = args[i], specs[i]
            if (
                not (
                    isinstance(t, torch.Tensor)
                    and t.dtype is s.dtype
                    and t.is_cpu
                    and t.shape == s.sizes
                    and t.stride() == s.strides
                )
                or not static
            ):
                _check(t, s, i)
            roots[r] = t
            ptrs.append(t.data_ptr())
        self._pack.pack_into(cx.frame, 0, *ptrs)
        if not static:
            self._bind_symbols(cx, args)

    def _bind_symbols(self, cx, args) -> None:
        g, vals = self.compiled.g, cx.vals
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
                raise InputMismatch(
                    f"irc: argument {i} ({g.args[i].name}): {what} is {_where(args, where)}, "
                    f"but the same symbol was bound to {vals[c]} by an earlier argument"
                )

    def _result(self, cx, r):
        if isinstance(r, Lin):
            return r.eval(cx.vals)
        root = self._roots[r.root]
        if root.buf is r:
            return cx.roots[r.root]
        return steps.tensor_of(cx, r)


def _dense_static_strides(r: Buf, root) -> tuple[int, ...] | None:
    """The strides every call gives result `r`, where the program alone decides them (a buffer it allocates, or a
    view it makes: not a library's own result or an input) and they lay its elements densely, else None."""
    if root.kind in ("extern", "input") and root.buf is r or not all(s.static for s in (*r.sizes, *r.strides)):
        return None
    strides = tuple(s.const for s in r.strides)
    return strides if is_dense([s.const for s in r.sizes], strides) else None


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


class Recorded(NamedTuple):
    """A context's calls, Python steps and per-call hook (launcher.Threads), each call inside a torch.profiler event."""

    calls: list
    steps: list
    guard: object


def _event(name: str, step) -> None:
    with _RecordFunctionFast(name):
        step()


def _extern_event(prefix: str, ext: extern_ops.Extern, ins, outs):
    with _RecordFunctionFast(f"{prefix}{ext.op} ({ext.path(ins)})"):
        return ext.run(ins, outs)


def _describe(st, ln) -> str:
    if st.kind == "launch":
        how = f"JITed {ln.fname}" if ln.fn is not None else "reference"
        return f"launch {st.op.callee.root_reference.data} ({how})"
    if st.kind == "extern":
        return "extern " + ", ".join(o.name for o in list(st.op.body.block.ops)[:-1])
    return st.kind


__all__ = ["Executor", "InputMismatch"]
