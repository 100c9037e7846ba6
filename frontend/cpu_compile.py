"""The backend's CPU path: tensor-opt -> loop -> mem (lowering/pipeline.lower) -> a JITed Program.

Nothing here may break the user's program: a lowering failure sends the graph to the tensor-level
reference (the caller does that when this returns None), a @main the CPU runtime cannot take runs on
the mem-stage reference, and a kernel or extern the CPU target cannot emit runs on the reference
evaluator inside an otherwise JITed graph; the compile report lists each with its reason.
IRC_CPU_STRICT=1 makes the first two (and any kernel that could not be emitted) raise instead, for
development.

Compiled artefacts are cached on disk (targets/cpu/cache.py: IRC_CACHE_DIR, default
$XDG_CACHE_HOME/irc or ~/.cache/irc; options={"cache": False} or IRC_CACHE=0 turn it off): the machine
code of each graph, keyed by its LLVM IR, the CPU and the versions; and the mem stage of each graph,
keyed by the tensor-opt IR, the argument layouts and a fingerprint of the compiler's own sources, so a
second process neither lowers nor compiles what an earlier one did.
"""

import copy
import dataclasses
import functools
import hashlib
import json
import math
import os
import time
from pathlib import Path

from irc import report
from irc.log import get as logger
from irc.log import stage as progress_stage
from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module
from irc.options import Options

cache_log, fallback_log = logger("cache"), logger("fallbacks")
STRICT = os.environ.get("IRC_CPU_STRICT") == "1"


@functools.cache
def sources_fingerprint() -> str:
    """A hash of the sources the mem stage depends on (ir, dialects, lowering, frontend): a cached mem stage
    is reused only by the very compiler that produced it."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for part in ("ir", "dialects", "lowering", "frontend"):
        for p in sorted((root / part).rglob("*.py")):
            h.update(p.read_bytes())
    return h.hexdigest()


def lowered_matmul(opts: Options) -> str:
    """How this compile lowers matrix products: "loops" (generated) or "extern" (the library)."""
    return "loops" if opts.matmul == "loops" else "extern"


def _lower(module, args, opts: Options, rep: report.GraphReport, dump):
    """The mem-stage module and the lowering summary, from the disk cache when this graph was lowered before."""
    from irc.lowering.pipeline import Lowered, lower
    from irc.targets.cpu import cache

    use = opts.cache and not opts.dump_dir and cache.is_enabled()
    matmul = lowered_matmul(opts)
    key = cache.make_key("mem", print_module(module), repr(args), matmul, sources_fingerprint()) if use else None
    hit = cache.get_json("mem", key) if use else None
    name = f"graph {rep.index} ({rep.kind})"
    if hit is not None:
        try:
            module = parse_module(make_context(ALL_DIALECTS), hit["mem"])
            cache_log.info("%s: mem stage from the disk cache (hit)", name)
            return module, Lowered(**hit["lowered"]), True
        except Exception as e:  # noqa: BLE001 - an unreadable entry is a miss
            cache_log.info("%s: cached mem stage unusable (%s); lowering again", name, e)
    elif use:
        cache_log.info("%s: mem stage not in the disk cache (miss); lowering", name)
    else:
        cache_log.debug("%s: disk cache off (options cache=False, dump_dir, or IRC_CACHE=0)", name)
    lowered = lower(module, verify=False, dump=lambda stage, m: dump(stage, print_module(m)), matmul=matmul)
    if use:
        try:
            fields = {k: getattr(lowered, k) for k in Lowered.__dataclass_fields__}
            cache.put_json("mem", key, {"mem": print_module(module), "lowered": json.loads(json.dumps(fields))})
        except (TypeError, ValueError) as e:
            cache_log.info("%s: mem stage not cached (%s)", name, e)
    return module, lowered, False


def conv_timer(opts: Options):
    """select-layout's measurement for the CPU target: (nchw_s, nhwc_s) of torch's convolution for one shape,
    measured once and kept in the on-disk cache (targets/cpu/conv_layout.py), honouring options={"cache": ...}."""
    from irc.targets.cpu import cache
    from irc.targets.cpu.conv_layout import conv_seconds

    def timer(**problem):
        with cache.enabled(opts.cache):
            return conv_seconds(**problem)

    return timer


def graph_args(gm, result) -> list:
    """The ArgSpecs of a graph's @main: its placeholders, then the constants the import added."""
    from irc.targets.cpu.graph import ArgSpec

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = [n.name for n in placeholders] + [f"constant{i}" for i in range(len(result.constants))]
    values = [n.meta.get("val") for n in placeholders] + list(result.constants)
    return [ArgSpec.of(v, name) for v, name in zip(values, names)]


def lower_to_mem(module, args, opts: Options, rep: report.GraphReport, dump):
    """The mem-stage module (lowered, or from the disk cache) with its summary in the report; None when
    lowering fails (the graph then runs on the tensor-level reference). Shared by the cpu and triton paths."""
    from irc.targets.cpu import cache

    progress_stage("loop+mem")
    t0 = time.perf_counter()
    try:
        with cache.enabled(opts.cache):
            module, lowered, cached = _lower(module, args, opts, rep, dump)
    except Exception as e:  # a lowering bug: the graph still runs, on the tensor-level reference
        if STRICT:
            raise
        fallback_log.warning("irc: lowering graph %d failed (%s); it runs on the reference target", rep.index, e)
        rep.target_fallbacks.append(("graph", f"lowering failed: {type(e).__name__}: {e}"))
        return None
    rep.stage_seconds["mem (cached)" if cached else "loop+mem"] = time.perf_counter() - t0
    rep.fused_kernels, rep.externs = lowered.kernels, list(lowered.externs)
    rep.planned_peak_bytes, rep.intermediate_bytes = lowered.arena_bytes, lowered.intermediate_bytes
    rep.fusion_refusals = list(lowered.refusals)
    return module


def compile_cpu(gm, module, result, opts: Options, rep: report.GraphReport, dump):
    """The runnable program for a tensor-opt module (consumed), or None when lowering fails."""
    args = graph_args(gm, result)
    if opts.mode == "max-autotune" and opts.matmul == "auto" and small_matmuls(module):
        return _choose_matmul(module, args, opts, rep, dump)
    return _build(module, args, opts, rep, dump)


def small_matmuls(module) -> bool:
    """Whether the module has matrix products and every one is static and at most SMALL_MACS multiply-adds:
    the products for which max-autotune measures generated against library code."""
    from irc.dialects import tensor as tn
    from irc.ir.types import DYN
    from irc.targets.cpu.autotune import SMALL_MACS

    sizes = [(op.lhs.type.get_shape(), op.rhs.type.get_shape()[-1]) for op in module.walk() if isinstance(op, tn.MmOp | tn.BmmOp)]
    return bool(sizes) and all(DYN not in (*a, n) and math.prod(a) * n <= SMALL_MACS for a, n in sizes)


def _choose_matmul(module, args, opts: Options, rep: report.GraphReport, dump):
    """max-autotune on a graph of small products: the program with generated matmuls or the one calling the
    library, whichever runs the whole graph faster (measured once, the choice kept in the disk cache)."""
    from irc.targets.cpu import autotune, cache
    from irc.targets.cpu.program import Program

    key = autotune.matmul_key(print_module(module), repr(args), sources_fingerprint())
    with cache.enabled(opts.cache):
        rec = cache.get_json("autotune", key) if opts.cache and cache.is_enabled() else None
    if rec is not None:
        program = _build(module, args, dataclasses.replace(opts, matmul=rec["matmul"]), rep, dump)
        if isinstance(program, Program):
            rep.mode_notes.append(f"matmul: {rec['note']} (from the disk cache)")
        return program
    built = {}
    for choice in ("loops", "extern"):  # the library's last: its report stays when it wins or ties
        r = copy.deepcopy(rep)
        m = module.clone() if choice == "loops" else module
        built[choice] = (_build(m, args, dataclasses.replace(opts, matmul=choice), r, dump), r)
    programs = {c: built[c][0] for c in ("extern", "loops") if isinstance(built[c][0], Program)}  # the incumbent first
    if len(programs) < 2:  # one of them could not be built for the CPU: take the other as it is
        choice = "extern" if built["extern"][0] is not None else "loops"
        rep.__dict__.update(built[choice][1].__dict__)
        return built[choice][0]
    with cache.enabled(opts.cache):
        choice, note = autotune.choose_program(programs)
        if opts.cache and cache.is_enabled() and cache.quiet():
            cache.put_json("autotune", key, {"matmul": choice, "note": note})
    rep.__dict__.update(built[choice][1].__dict__)
    rep.mode_notes.append(f"matmul: {note} (measured)")
    return built[choice][0]


def _build(module, args, opts: Options, rep: report.GraphReport, dump):
    """Lower (matrix products as opts.matmul says) and JIT one tensor-opt module (consumed)."""
    from irc.targets.cpu import cache
    from irc.targets.cpu.program import Program

    module = lower_to_mem(module, args, opts, rep, dump)
    if module is None:
        return None
    progress_stage("llvm")
    t0 = time.perf_counter()
    try:
        with cache.enabled(opts.cache):
            program = Program(module, args, cache=opts.cache, mode=opts.mode)
    except Exception as e:  # the runtime cannot take this @main: the mem-stage reference runs it
        if STRICT:
            raise
        from irc.targets.reference.memory import MemRunner

        rep.target, rep.target_fallbacks = "cpu", [("graph", f"cpu runtime: {type(e).__name__}: {e}")]
        rep.stage_seconds["llvm"] = time.perf_counter() - t0
        return MemRunner(module)
    rep.target, rep.kernels, rep.cache_hit = "cpu", program.kernels, program.cache_hit if program.kernels else None
    rep.target_fallbacks = list(program.fallbacks)
    rep.mode, rep.python_steps, rep.mode_notes = opts.mode, program.python_steps, list(program.mode_notes)
    if STRICT and any(w.startswith("kernel") for w, _ in program.fallbacks):
        raise RuntimeError(f"cpu target fallbacks: {program.fallbacks}")
    rep.stage_seconds["llvm"] = time.perf_counter() - t0
    return program


def program_for(fn, *inputs, dynamic: bool = False, cache: bool = True, mode: str = "default", matmul: str = "extern"):
    """(Program, constants) for a plain function, without Dynamo: make_fx with the backend's decompositions,
    import, tensor-opt, lower (matmul: "extern" or "loops"), JIT. Call as `program([*inputs, *constants])`.
    For tests and benchmarks."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from irc.lowering.pipeline import TENSOR_OPT, lower
    from irc.ir import run_passes
    from irc.targets.cpu.graph import ArgSpec
    from irc.targets.cpu.program import Program

    from .decompositions import decomposition_table
    from .fx_import import import_graph

    gm = make_fx(lambda *a: fn(*a), tracing_mode="symbolic" if dynamic else "fake",
                 decomposition_table=decomposition_table())(*inputs)  # fmt: skip
    res = import_graph(gm)
    module = res.module
    run_passes(make_context(ALL_DIALECTS), module, TENSOR_OPT)
    lower(module, matmul=matmul)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    metas = [n.meta.get("val") for n in placeholders] + list(res.constants)
    names = [n.name for n in placeholders] + [f"c{i}" for i in range(len(res.constants))]
    specs = [ArgSpec.of(m, name) for m, name in zip(metas, names)]
    return Program(module, specs, cache=cache, mode=mode), list(res.constants)
