"""What one call runs (executor.py): the context it mutates (frame cells, roots, the bound steps) and the
step functions (alloc, derive, extern, launches: JITed, dynamic, or on the reference evaluator)."""

from __future__ import annotations

import ctypes

import torch

from ..codegen.affine import Lin, eval_affine
from . import alloc, parallel
from .graph import Buf


class Ctx:
    def __init__(self, ncells: int, nroots: int):
        self.frame = (ctypes.c_int64 * max(1, ncells))()
        self.vals = [0] * max(1, ncells)
        self.roots: list = [None] * nroots
        self.steps: list = []
        self.names: list[str] = []
        self.keep: list = []
        self.per_call: list = []
        self.argv: dict[int, int] = {}  # step index -> address of its launch's argv
        self.dead: list[list[int]] = []  # per step: the roots it is the last to name (Graph.dead_after)
        self.calls: list = self.steps  # what a call runs: the steps, or their launchers (launcher.bind)
        self.guard = None  # launcher.Threads when the launchers may run kernels on several threads
        self.recorded = None  # the calls as torch.profiler events (executor.Recorded), run while a profiler records
        self.call = None  # the generated call on this context (call_source.py), where there are no launchers
        # the generated call's scratch (call_source.scratch_roots): root -> its buffer, bytes and address, kept
        # from call to call and grown when a call needs more
        self.scratch: dict[int, torch.Tensor] = {}
        self.room = [0] * nroots
        self.scratch_ptr = [0] * nroots

    def set(self, c: int, v: int) -> None:
        self.vals[c] = v
        self.frame[c] = v


def tensor_of(cx: Ctx, buf: Buf) -> torch.Tensor:
    r = cx.roots[buf.root]
    if r.dtype != buf.dtype:
        r = r.view(buf.dtype)
    v = cx.vals
    return r.as_strided(
        [s.eval(v) for s in buf.sizes], [s.eval(v) for s in buf.strides], r.storage_offset() + buf.offset.eval(v)
    )


def derive(cx, c, fn, a, b):
    v = cx.vals
    cx.set(c, fn(a.eval(v), b.eval(v)))


def alloc_dynamic(cx, r, c, sizes, strides, dtype):
    v = cx.vals
    t = alloc.empty(tuple(s.eval(v) for s in sizes), tuple(s.eval(v) for s in strides), dtype)
    cx.roots[r] = t
    cx.set(c, t.data_ptr())


def grow_scratch(cx, r: int, nbytes: int) -> None:
    t = alloc.empty_small((nbytes,), (1,), torch.uint8)
    cx.scratch[r], cx.room[r], cx.scratch_ptr[r] = t, nbytes, t.data_ptr()


def alloc_static(roots, r, frame, c, shape, strides, dtype):
    t = alloc.empty(shape, strides, dtype)
    roots[r] = t
    frame[c] = t.data_ptr()


def operand(cx, x):
    return x.eval(cx.vals) if isinstance(x, Lin) else tensor_of(cx, x)


def extern(cx, g, st, run):
    fresh = run([operand(cx, x) for x in st.ins], [tensor_of(cx, b) for b in st.outs])
    if st.results:
        extern_results(cx, g, st, fresh)


def extern_results(cx, g, st, fresh):
    """Bind an extern's fresh results: their roots, addresses and runtime sizes."""
    for (root, cells), t in zip(st.results, fresh):
        t = t.contiguous()  # library paths may answer channels-last: the graph reads its results row-major
        cx.roots[root] = t
        cx.set(g.roots[root].cell, t.data_ptr())
        for c, n in zip(cells, t.shape):
            if c is not None:
                cx.set(c, n)


def reference_launch(cx, g, st):
    from irc.targets.reference.loop import run_nest

    nest = g.kernels[st.op.callee.root_reference.data]
    params = list(nest.parent_block().args)
    views = [tensor_of(cx, b) for b in st.ins + st.outs]
    env = dict(zip(params, views))
    run_nest(nest, env.__getitem__, [s.eval(cx.vals) for s in st.syms], views[len(st.ins) :])


def counter(plan, syms):
    """(items, work per item) when static, else a function of the cell values giving them."""

    def count(symvals):
        outer = [eval_affine(e, symvals) for e in plan["outer"]]
        work = 1
        for e in plan["inner"]:
            work *= eval_affine(e, symvals)
        if plan["blocked"] is not None:  # an item is a block of rows of one outer dim (tiles.Tile)
            k = plan["blocked"]
            work *= min(outer[k], plan["rows"])
            outer[k] = -(-outer[k] // plan["rows"])
        items = 1
        for n in outer:
            items *= n
        if plan["chunk"] is not None:
            n = eval_affine(plan["chunk"], symvals)
            items *= -(-n // plan["cols"])
            work *= min(n, plan["cols"])
        return items, max(work, 1)

    if all(s.static for s in syms):
        return count([s.const for s in syms])
    return lambda vals: count([s.eval(vals) for s in syms])


def dynamic_launch(vals, fn, par, addr, count, min_work):
    items, work = count(vals)
    if items > 0:
        parallel.launch(fn, par, items, addr, work, min_work)
