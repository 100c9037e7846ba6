"""mode="max-autotune": each launch of a static graph measured in a few variants, the fastest kept.

    choices, notes = tune(compiled, executor, use_cache)   # Choices off the defaults (None: none), report lines
    compiled.build(choices)                                 # the caller applies them

Variants per launch, in two rounds. First the vector width (half, the host's own, double and four
times: LLVM splits a wider vector into several registers per op, i.e. the body unrolled with that
many independent accumulators) and, where the launch has at least two items, serial against split
across torch's threads (the parallel threshold). Then, for launches whose innermost dim is parallel,
tile sizes (tiles.Tile: rows of one outer dim by columns of the innermost one per item; TILES)
at the width the first round chose. Per matmul the launchers run as MKL's sgemm_: MKL's own thread
count against one thread (MKL_Set_Num_Threads_Local around the call). Each variant module is compiled
once for all launches it changes; the launches run on the program's own arena and on random inputs
of the compiled sizes, every variant of one launch in turn (round-robin, so load from other
processes hits all alike), medians decide, and a variant must beat the incumbent by MARGIN to be
taken (launches under SMALL_S are left alone: there the call's own overhead and noise decide). The
whole search is bounded by BUDGET_S seconds. Choices are stored in the on-disk cache (irc/cache.py, kind
"autotune") keyed by the graph's default LLVM module, the CPU, the thread count and the versions, so a
second process (or a second compile of the same graph) measures nothing: STATS counts both.

Whether a matrix product is generated (lowering/matmul_loops.py) or the library's is a choice made
before the kernels exist: the driver compiles the graph both ways and the target's `choose` measures them.
"""

from __future__ import annotations

import time
from functools import partial

from llvmlite import ir

from irc import cache
from irc.targets.timing import MARGIN, fastest, measure, random_inputs

from ..codegen.emit import emit_kernel
from ..codegen.tiles import DEFAULT_TILE, Tile
from ..libs import extern_ops
from . import jit, launcher, parallel, steps
from .compiled import SERIAL, SIG, Choices, Variant

BUDGET_S = 3.0  # seconds of measurement per graph, at most (compiling the variants not included)
SMALL_S = 2e-6  # a launch whose default takes less than this is left alone: call overhead and noise dominate
STATS = {"measured": 0, "disk_hits": 0, "compile_s": 0.0}  # compile_s: the last search's variant compiles
# rows x columns per item: small square blocks for transposed reads, wide short ones for matmul panels
TILES = (Tile(4, 1024), Tile(8, 64), Tile(16, 128), Tile(32, 32))
VERSION = "2"  # of the record's layout
SMALL_MACS = 1 << 18  # products up to this many multiply-adds are measured generated against the library


def _key(compiled) -> str:
    return cache.make_key(
        "autotune", VERSION, compiled.llvm_ir, jit.host().cpu, str(parallel.num_threads()), jit.versions()
    )


def _inputs(compiled) -> list:
    return random_inputs(compiled.g.args)


def _lanes_variants(compiled, use_cache: bool) -> dict[int, object]:
    """lanes -> compiled module holding every launch at that width (launch fnames per width in .fnames)."""
    libs, n = {}, compiled.lanes
    for lanes in sorted({max(4, n // 2), n, n * 2, n * 4}):
        mod = ir.Module(f"irc_tune_{lanes}")
        fnames = [fname for fname, _ in compiled.emit_kernels(mod, lambda ln, lanes=lanes: (lanes, DEFAULT_TILE))]
        if not any(fnames):
            continue
        lib = jit.compile_module(mod, use_cache=use_cache)
        lib.fnames = fnames
        libs[lanes] = lib
    return libs


def _tile_variants(compiled, lanes: list[int], use_cache: bool) -> dict[Tile, object]:
    """tile -> compiled module holding each launch with a parallel innermost dim (at lanes[j]) in that tile,
    the default tile and TILES; .fnames and .plans per launch (None where the launch is not tiled)."""
    libs = {}
    tiled = [j for j, ln in enumerate(compiled.launches) if ln.fn is not None and ln.plan["chunk"] is not None]
    if not tiled:
        return libs
    for tile in (DEFAULT_TILE, *TILES):
        n = len(compiled.launches)
        mod, fnames, plans = ir.Module(f"irc_tile_{tile.rows}x{tile.cols}"), [None] * n, [None] * n
        for j in tiled:
            ln = compiled.launches[j]
            fnames[j] = f"t{j}"
            plans[j] = emit_kernel(mod, fnames[j], compiled.g.kernels[ln.key[0]], ln.params, lanes[j], tile)
        lib = jit.compile_module(mod, use_cache=use_cache)
        lib.fnames, lib.plans = fnames, plans
        libs[tile] = lib
    return libs


def _candidates(lib, fname, plan, syms, argv, threads):
    """{parallel?: call} for kernel `fname` of `lib`: serial and, where it has two items or more and there
    are threads, on torch's threads (its k_par)."""
    count = steps.counter(plan, syms)
    if not isinstance(count, tuple) or count[0] <= 0:
        return {}
    items, work = count
    fn = lib.function(fname, *SIG)
    out = {False: partial(fn, 0, items, argv)}
    if items >= 2 and threads > 1:
        par = lib.function(f"{fname}_par", *parallel.PAR_SIG)
        out[True] = partial(parallel.launch, fn, par, items, argv, work, 0)
    return out


def _race(cands: dict, base, deadline: float):
    """(best key, {key: median seconds}) when a candidate beats `base` by MARGIN, else (None, None)."""
    if base not in cands or len(cands) < 2:
        return None, None
    times = measure(cands, reps=9, budget_s=max(0.02, min(0.3, deadline - time.perf_counter())))
    best = min(times, key=times.get)
    if times[base] < SMALL_S or times[best] >= MARGIN * times[base]:
        return None, None
    return best, times


def _measure(compiled, executor, use_cache: bool) -> tuple[list[list], dict]:
    """Per launch [lanes, parallel, note, tile] of the fastest variant ([None, None, None, None]: the default's),
    and the per-sgemm_ record of _measure_mm. The launches run on the pooled context of `executor` (compiled's)."""
    with executor.pooled_context() as cx:
        return _measure_on(compiled, executor, cx, use_cache)


def _measure_on(compiled, executor, cx, use_cache: bool) -> tuple[list[list], dict]:
    chosen = [[None, None, None, None] for _ in compiled.launches]
    t0 = time.perf_counter()
    libs = _lanes_variants(compiled, use_cache)
    STATS["compile_s"] = time.perf_counter() - t0
    executor.bind(cx, _inputs(compiled))
    with extern_ops.trial_calls():  # random inputs: no extern may take their weights for the real ones
        for step in cx.steps:  # fill every buffer once, as a call would
            step()
    index = {id(st): i for i, st in enumerate(compiled.g.steps)}
    threads = parallel.num_threads()
    deadline = time.perf_counter() + BUDGET_S
    incumbent = {}  # launch -> (lanes, parallel) after the first round
    for j, ln in enumerate(compiled.launches):
        if ln.fn is None or time.perf_counter() > deadline:
            continue
        argv, cands = cx.argv[index[id(ln.step)]], {}
        for lanes, lib in libs.items():
            if lib.fnames[j] is not None:
                for par, call in _candidates(lib, lib.fnames[j], ln.plan, ln.step.syms, argv, threads).items():
                    cands[(lanes, par)] = call
        count = steps.counter(ln.plan, ln.step.syms)
        if not isinstance(count, tuple) or count[0] <= 0:
            continue
        items, work = count
        base = (compiled.default_lanes(ln), items * work >= compiled.min_work and items >= 2 and threads > 1)
        best, times = _race(cands, base, deadline)
        if best is not None:
            us = ", ".join(f"{lanes}{'p' if par else ''} {t * 1e6:.1f}" for (lanes, par), t in times.items())
            chosen[j] = [
                best[0],
                best[1],
                f"{ln.key[0]}: {best[0]} lanes, {'parallel' if best[1] else 'serial'} (median us: {us})",
                None,
            ]
        incumbent[j] = best or base
    _measure_tiles(compiled, cx, index, chosen, incumbent, deadline, use_cache)
    return chosen, _measure_mm(compiled, cx, deadline)


def _measure_tiles(compiled, cx, index, chosen, incumbent, deadline, use_cache: bool) -> None:
    """The second round: tile sizes for launches with a parallel innermost dim, at the lanes the first chose."""
    lanes = [incumbent.get(j, (compiled.default_lanes(ln),))[0] for j, ln in enumerate(compiled.launches)]
    if time.perf_counter() > deadline:
        return
    t0 = time.perf_counter()
    libs = _tile_variants(compiled, lanes, use_cache)
    STATS["compile_s"] += time.perf_counter() - t0
    deadline += time.perf_counter() - t0  # compiling the variants is not measuring
    threads = parallel.num_threads()
    for j, ln in enumerate(compiled.launches):
        if j not in incumbent or time.perf_counter() > deadline or not any(lib.fnames[j] for lib in libs.values()):
            continue
        argv, base, cands = cx.argv[index[id(ln.step)]], (DEFAULT_TILE, incumbent[j][1]), {}
        for tile, lib in libs.items():  # the default tile among them: the incumbent at the lanes it chose
            for par, call in _candidates(lib, lib.fnames[j], lib.plans[j], ln.step.syms, argv, threads).items():
                cands[(tile, par)] = call
        best, times = _race(cands, base, deadline)
        if best is None:
            continue
        us = ", ".join(f"{_tile_name(t)}{'p' if par else ''} {v * 1e6:.1f}" for (t, par), v in times.items())
        tile, par = best
        chosen[j] = [
            lanes[j],
            par,
            f"{ln.key[0]}: {lanes[j]} lanes, {_tile_name(tile)} tiles, "
            f"{'parallel' if par else 'serial'} (median us: {us})",
            list(tile),
        ]


def _tile_name(t: Tile) -> str:
    return "default" if t == DEFAULT_TILE else f"{t.rows}x{t.cols}"  # the default: the emitter's own choice (tiles.py)


def _measure_mm(compiled, cx, deadline) -> dict[str, list]:
    """Per native sgemm_ of the launchers (step index): [MKL threads, note] when one thread beats MKL's own choice."""
    p, threads = compiled.launch_plan, parallel.num_threads()
    if p is None or threads < 2 or "MKL_Set_Num_Threads_Local" not in launcher.blas():
        return {}
    out = {}
    for i in [what[1] for seg in p.segments for what in seg if what[0] == "mm"]:
        if time.perf_counter() > deadline:
            break
        st = compiled.g.steps[i]
        a, b, c = (steps.tensor_of(cx, buf) for buf in (*st.ins, st.outs[0]))
        cands = {"mkl": launcher.sgemm_call(st, a, b, c), 1: launcher.sgemm_call(st, a, b, c, threads=1)}
        times = measure(cands, reps=9, budget_s=max(0.02, min(0.3, deadline - time.perf_counter())))
        if times[1] < MARGIN * times["mkl"]:
            (m, k), n = a.shape, b.shape[1]
            out[str(i)] = [
                1,
                f"mm {m}x{k}x{n}: one MKL thread (median us: {times[1] * 1e6:.1f}, MKL's own {times['mkl'] * 1e6:.1f})",
            ]
    return out


def tune(compiled, executor, use_cache: bool) -> tuple[Choices | None, list[str]]:
    """Each launch's variant for `compiled` (built in the defaults), measured on contexts of `executor` or taken
    from the disk cache when this graph was tuned before: (Choices, None when every default stays; report lines)."""
    key = _key(compiled)
    rec = cache.get_json("autotune", key) if use_cache else None
    if rec is not None and len(rec.get("launches", ())) == len(compiled.launches) and "mm" in rec:
        STATS["disk_hits"] += 1
        source = "from the disk cache"
    else:
        t0 = time.perf_counter()
        launches, mm = _measure(compiled, executor, use_cache)
        rec = {"launches": launches, "mm": mm}
        STATS["measured"] += 1
        spent = time.perf_counter() - t0
        source = f"measured in {spent:.2f} s, of which {STATS['compile_s']:.2f} s compiling the variants"
        if use_cache and cache.quiet():
            cache.put_json("autotune", key, rec)
    variants = [
        Variant()
        if lanes is None
        else Variant(
            lanes if lanes != compiled.default_lanes(ln) else None,
            0 if par else SERIAL,
            Tile(*tile) if tile else DEFAULT_TILE,
        )
        for ln, (lanes, par, _, tile) in zip(compiled.launches, rec["launches"])
    ]
    mm_threads = {int(i): threads for i, (threads, _) in rec["mm"].items()}
    changed = any(lanes is not None for lanes, *_ in rec["launches"]) or bool(mm_threads)
    notes = [note for _, _, note, _ in rec["launches"] if note]
    head = f"autotune ({source}): {len(notes)} of {len(compiled.launches)} launches, {len(rec['mm'])} matmuls off the default"
    return Choices(variants, mm_threads) if changed else None, [head, *notes, *(note for _, note in rec["mm"].values())]


def whole_program(default, choices: Choices, use_cache: bool, make) -> tuple[bool, str]:
    """Whether the graph built in `choices` beats the default build as a whole call (a mode is never slower than
    the default: launches measured one by one may still lose together, to cache or thread effects); `default` is
    the built default executor, make() a fresh Compiled of the same graph. The verdict is kept in the disk cache."""
    key = cache.make_key("autotune-whole", VERSION, _key(default.compiled), repr(choices))
    rec = cache.get_json("autotune", key) if use_cache else None
    if rec is None:
        from .executor import Executor

        tuned = make()
        tuned.build(choices, cache=use_cache)
        label, note = fastest_call({"default": default, "tuned": Executor(tuned)}, default.compiled.g.args)
        rec = {"tuned": label == "tuned", "note": note}
        if use_cache and cache.quiet():
            cache.put_json("autotune", key, rec)
        return rec["tuned"], f"whole program: {note} (measured)"
    return rec["tuned"], f"whole program: {rec['note']} (from the disk cache)"


def fastest_call(runs: dict, args) -> tuple[str, str]:
    """(label, note) of the fastest whole call among {label: run} of one graph (built differently), on the same
    random inputs of its arguments' sizes (targets/timing.py: the first label is the incumbent)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily(), extern_ops.trial_calls():  # random inputs: no extern may keep their weights
        return fastest(runs, random_inputs(args), budget_s=BUDGET_S / 3)
