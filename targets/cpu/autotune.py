"""mode="max-autotune": each launch of a static graph measured in a few variants, the fastest kept.

    notes = tune(program)     # sets launch.lanes / launch.min_work; True when anything differs

Variants per launch: the vector width (half, the host's own, double: LLVM splits a double-width vector
into two registers per op, i.e. the body unrolled twice) and, where the launch has at least two items,
serial against split across the thread pool (the parallel threshold). Per matmul the launchers run as
MKL's sgemm_: MKL's own thread count against one thread (MKL_Set_Num_Threads_Local around the call).
Each variant module is compiled once for all launches; the launches run on the program's own arena and
on random inputs of the compiled sizes, every variant of one launch in turn (round-robin, so load from
other processes hits all alike), medians decide, and a variant must beat the default by MARGIN to be
taken (launches under SMALL_S are left alone: there the call's own overhead and noise decide). The
whole search is bounded by BUDGET_S seconds. Choices are stored in the on-disk cache (cache.py, kind
"autotune") keyed by the graph's default LLVM module, the CPU, the thread count and the versions, so a
second process (or a second compile of the same graph) measures nothing: STATS counts both.
"""

from __future__ import annotations

import ctypes
import time
from functools import partial

import torch
from llvmlite import ir

from . import cache, jit, launcher, parallel, steps
from .externs import measure

BUDGET_S = 3.0  # seconds of measurement per graph, at most (compiling the variants not included)
MARGIN = 0.9  # a variant is taken only when its median is below MARGIN x the default's
SMALL_S = 2e-6  # a launch whose default takes less than this is left alone: call overhead and noise dominate
STATS = {"measured": 0, "disk_hits": 0, "compile_s": 0.0}  # compile_s: the last search's variant compiles
SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def _key(prog) -> str:
    return cache.make_key("autotune", prog.llvm_ir, jit.host().cpu, str(parallel.num_threads()), jit.versions())


def _inputs(prog) -> list:
    g = torch.Generator().manual_seed(0)
    out = []
    for s in prog.g.args:
        if s.kind == "tensor":
            t = torch.empty_strided(s.sizes, s.strides, dtype=s.dtype)
            if s.dtype.is_floating_point:
                t.copy_(torch.randn(s.sizes, generator=g).to(s.dtype))
            else:
                t.zero_()  # index operands: 0 is always in bounds
            out.append(t)
        else:
            out.append(s.value if s.kind == "index" else None)
    return out


def _variants(prog) -> dict[int, object]:
    """lanes -> compiled module holding every launch at that width (launch fnames per width in .fnames)."""
    libs = {}
    for lanes in sorted({max(4, prog.lanes // 2), prog.lanes, prog.lanes * 2}):
        mod = ir.Module(f"irc_tune_{lanes}")
        prog.emit_kernels(mod, lambda ln, lanes=lanes: lanes)
        fnames = [ln.fname for ln in prog.launches]
        if not any(fnames):
            continue
        lib = jit.compile_module(mod)
        lib.fnames = fnames
        libs[lanes] = lib
    return libs


def _measure(prog) -> tuple[list[list], dict]:
    """Per launch [lanes, parallel, note] of the fastest variant ([None, None, None]: the default's)."""
    chosen = [[None, None, None] for _ in prog.launches]
    saved = [(ln.fname, ln.plan) for ln in prog.launches]
    t0 = time.perf_counter()
    libs = _variants(prog)
    STATS["compile_s"] = time.perf_counter() - t0
    for ln, (fname, plan) in zip(prog.launches, saved):
        ln.fname, ln.plan = fname, plan
    cx = prog._context()
    prog._bind(cx, _inputs(prog))
    for step in cx.steps:  # fill every buffer once, as a call would
        step()
    index = {id(st): i for i, st in enumerate(prog.g.steps)}
    threads = parallel.num_threads()
    deadline = time.perf_counter() + BUDGET_S
    for j, ln in enumerate(prog.launches):
        count = steps.counter(ln.plan, ln.step.syms) if ln.fn is not None else None
        if not isinstance(count, tuple) or count[0] <= 0 or time.perf_counter() > deadline:
            continue
        (items, work), argv = count, cx.argv[index[id(ln.step)]]
        cands = {}
        for lanes, lib in libs.items():
            if lib.fnames[j] is None:
                continue
            fn = lib.function(lib.fnames[j], *SIG)
            cands[(lanes, False)] = partial(fn, 0, items, argv)
            if items >= 2 and threads > 1:
                cands[(lanes, True)] = partial(prog.parallel, fn, 0, items, argv, work_per_item=work, align=1, min_work=0)
        base = (prog.lanes, items * work >= prog.min_work and items >= 2 and threads > 1)
        if base not in cands or len(cands) < 2:
            continue
        times = measure(cands, reps=9, budget_s=max(0.02, min(0.3, deadline - time.perf_counter())))
        best = min(times, key=times.get)
        if times[base] >= SMALL_S and times[best] < MARGIN * times[base]:
            us = ", ".join(f"{lanes}{'p' if par else ''} {t * 1e6:.1f}" for (lanes, par), t in times.items())
            how = "parallel" if best[1] else "serial"
            chosen[j] = [best[0], best[1], f"{ln.key[0]}: {best[0]} lanes, {how} (median us: {us})"]
    return chosen, _measure_mm(prog, cx, deadline)


def _measure_mm(prog, cx, deadline) -> dict[str, list]:
    """Per native sgemm_ of the launchers (step index): [MKL threads, note] when one thread beats MKL's own choice."""
    p, threads = prog._native_plan, parallel.num_threads()
    if p is None or threads < 2 or "MKL_Set_Num_Threads_Local" not in launcher._blas():
        return {}
    out = {}
    for i in [what[1] for seg in p.segments for what in seg if what[0] == "mm"]:
        if time.perf_counter() > deadline:
            break
        st = prog.g.steps[i]
        a, b, c = (steps.tensor_of(cx, buf) for buf in (*st.ins, st.outs[0]))
        cands = {"mkl": launcher.sgemm_call(st, a, b, c), 1: launcher.sgemm_call(st, a, b, c, threads=1)}
        times = measure(cands, reps=9, budget_s=max(0.02, min(0.3, deadline - time.perf_counter())))
        if times[1] < MARGIN * times["mkl"]:
            (m, k), n = a.shape, b.shape[1]
            out[str(i)] = [1, f"mm {m}x{k}x{n}: one MKL thread (median us: {times[1] * 1e6:.1f}, "
                              f"MKL's own {times['mkl'] * 1e6:.1f})"]  # fmt: skip
    return out


def tune(prog, use_cache: bool = True) -> tuple[bool, list[str]]:
    """Choose each launch's variant (from the disk cache when this graph was tuned before); (changed, notes)."""
    key = _key(prog)
    rec = cache.get_json("autotune", key) if use_cache and cache.is_enabled() else None
    if rec is not None and len(rec.get("launches", ())) == len(prog.launches) and "mm" in rec:
        STATS["disk_hits"] += 1
        source = "from the disk cache"
    else:
        t0 = time.perf_counter()
        launches, mm = _measure(prog)
        rec = {"launches": launches, "mm": mm}
        STATS["measured"] += 1
        spent = time.perf_counter() - t0
        source = f"measured in {spent:.2f} s, of which {STATS['compile_s']:.2f} s compiling the variants"
        if use_cache and cache.is_enabled():
            cache.put_json("autotune", key, rec)
    changed = False
    for ln, (lanes, par, _) in zip(prog.launches, rec["launches"]):
        if lanes is None:
            continue
        ln.lanes = lanes if lanes != prog.lanes else None
        ln.min_work = 0 if par else 1 << 62
        changed = True
    for i, (threads, _) in rec["mm"].items():
        prog.mm_threads[int(i)] = threads
        changed = True
    notes = [note for *_, note in rec["launches"] if note]
    head = f"autotune ({source}): {len(notes)} of {len(prog.launches)} launches, {len(rec['mm'])} matmuls off the default"
    return changed, [head, *notes, *(note for _, note in rec["mm"].values())]
