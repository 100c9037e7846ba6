"""The torch.compile entry: Dynamo's graph -> AOT autograd -> per graph, the frontend (FX -> tn) and the driver.

`backend` hands each graph AOT autograd makes (forward, backward or inference) to `compile_graph`, which imports
it (frontend/fx_import.py), freezes an inference graph's parameters (frontend/freeze.py), records how eager lays
out the results, and hands the tn module to the driver (compiler.build) for a runnable graph; it runs the whole
graph eagerly when irc cannot take it, and wraps the result in eager's calling convention (targets/runtime.py
CompiledGraph: aliases replayed, inputs written, outputs in eager's strides).
"""

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from irc import cache, compiler, lifetime, report
from irc.frontend.attention_ops import inline_encoder_layers
from irc.frontend.decompositions import decomposition_table
from irc.frontend.freeze import Freezer, static_inputs
from irc.frontend.freeze import plan as plan_freeze
from irc.frontend.fx_import import GraphUnsupported, import_graph
from irc.ir import print_module
from irc.log import Progress, configure
from irc.lowering import pipeline
from irc.options import Options
from irc.targets.args import graph_args
from irc.targets.runtime import CompiledGraph, output_spec

from . import compile_log, warm
from .aliases import drop_view_results, input_views, output_views
from .partition import keep_saved_inputs, recompute_partition, saved_mutated_inputs
from .saved_layouts import in_eager_layouts, keep_saved_layouts, take_saved_layouts


def backend(gm: torch.fx.GraphModule, example_inputs, *, mode=None, options=None):
    """torch.compile backend: `torch.compile(model, backend=irc.backend)` or `backend="irc"`."""
    opts = Options.resolve(mode, options)
    if "target" not in (options or {}) and "cuda" in devices(example_inputs):
        opts = replace(opts, target="triton")  # GPU tensors: the cpu target's JITed code cannot read them
    configure()  # IRC_LOGS
    dynamo_graph = report.new_dynamo_graph()
    compile_log.dynamo_graph(gm, dynamo_graph)

    static = static_inputs(example_inputs)  # parameters and buffers: inference graphs freeze them (frontend/freeze.py)
    inline_encoder_layers(gm)  # so that autocast, which AOT autograd traces under, lowers their products

    def compiler(kind: str):
        return lambda fx_gm, inputs: compile_graph(fx_gm, inputs, opts, kind, dynamo_graph, static, len(example_inputs))

    aot = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        partition_fn=recompute_partition,  # the forward saves the min-cut of what the backward reads
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(opts.attention),
        # an inference graph's writes to its inputs (an optimizer step, a cache update) stay in it as copy_: the
        # program computes the new values (in the inputs' own memory where it can) instead of AOT's runtime
        # copying each one after the call
        keep_inference_input_mutations=True,
    )
    try:
        with lifetime.compiling():
            return aot(gm, example_inputs)
    except Exception as e:  # AOT autograd itself failed: keep the user's program running
        if opts.strict:
            raise
        compile_log.fallbacks.warning("irc: AOT autograd failed (%s); running Dynamo graph %d eagerly", e, dynamo_graph)
        g = report.new_graph(dynamo_graph, "dynamo")
        g.eager_graph = f"AOT autograd failed: {type(e).__name__}: {e}"
        return gm.forward


def compile_graph(
    gm: torch.fx.GraphModule,
    example_inputs,
    opts: Options,
    kind: str,
    dynamo_graph: int,
    static=None,
    n_inputs=0,
    freezer: Freezer | None = None,
):
    """AOT autograd's fw/bw/inference compiler: the graph compiled, or run eagerly where it cannot be. `freezer`:
    the tensors to freeze, where an earlier compile of this graph found which are safe to (else plan_freeze finds)."""
    saved = saved_mutated_inputs(gm) if kind == "forward" else []
    compiled = _compile_graph(gm, example_inputs, opts, kind, dynamo_graph, static, n_inputs, freezer)
    return keep_saved_inputs(compiled, saved) if saved else compiled  # eager's gradients (partition.py)


def _compile_graph(gm, example_inputs, opts: Options, kind: str, dynamo_graph: int, static, n_inputs, freezer=None):
    rep = report.new_graph(dynamo_graph, kind)
    rep.nodes = sum(1 for n in gm.graph.nodes if n.op == "call_function")
    dump = _dumper(opts, rep)
    dump("fx", lambda: gm.print_readable(print_output=False))
    relaid, restore = take_saved_layouts(gm, example_inputs) if kind == "backward" else ({}, {})
    with Progress(compile_log.graph_name(rep)), lifetime.compiling():  # a line on stderr when this takes over a second
        try:
            if refusal := _device_refusal(opts.target, devices(example_inputs)):
                raise GraphUnsupported(refusal)
            if freezer is None:
                freezer = plan_freeze(gm, opts, kind, static, n_inputs)
            compiled = _compile(gm, opts, rep, dump, freezer, relaid)
            if freezer is not None:  # a frozen input that changes sends the calls to a compile without freezing
                places = freezer.values
                compiled = freezer.guard(
                    compiled,
                    lambda: compile_graph(gm, example_inputs, opts, kind, dynamo_graph),
                    lambda args: compile_graph(  # the same graph frozen on other tensors in those places
                        gm, example_inputs, opts, kind, dynamo_graph, freezer=Freezer({i: args[i] for i in places})
                    ),
                )
            compile_log.graph_done(rep)
            return in_eager_layouts(compiled, restore)
        except GraphUnsupported as e:
            rep.eager_graph = str(e)
            compile_log.eager_graph(rep, error=False)
        except Exception as e:  # an irc bug: never the user's problem unless they asked for strict
            if opts.strict:
                raise
            compile_log.fallbacks.warning(
                "irc: internal error compiling graph %d (%s); running it eagerly", rep.index, e, exc_info=True
            )
            rep.eager_graph = f"internal error: {type(e).__name__}: {e}"
    return in_eager_layouts(make_boxed_func(gm.forward), relaid | restore)


def devices(values) -> set[str]:
    """The device types of the tensors among `values` (Dynamo's and AOT autograd's example inputs)."""
    return {v.device.type for v in values if isinstance(v, torch.Tensor)}


def _device_refusal(target: str, on: set[str]) -> str | None:
    """Why `target` cannot run tensors on these devices (each target reads one kind of memory), else None."""
    if target == "cpu" and (elsewhere := on - {"cpu"}):
        return (
            f"the cpu target runs CPU tensors, and this graph's are on {', '.join(sorted(elsewhere))} "
            "(options={'target': 'triton'} runs them)"
        )
    if target == "triton" and on == {"cpu"}:
        from irc.targets.triton import ensure_interpreter

        if not ensure_interpreter():
            return (
                "the triton target runs GPU tensors here, and this graph's are on cpu "
                "(TRITON_INTERPRET=1 runs them under Triton's interpreter)"
            )
    return None


def _record_output_layouts(module, specs, metas, row_major: bool) -> None:
    """Record on @main the layout eager gives each result (irc.output_layout: dims outermost first, [] for
    unknown, and for row-major unless `row_major`: a forward's saved results keep the program's layout); the
    output-layout pass computes a permuted one in it, rather than row-major and then copied into it by the
    runtime (`x.t() * 2`, channels-last results), and copies a permuted view to a row-major one itself."""
    from irc.lowering.output_layout import ATTR, memory_order, record

    orders: dict[int, tuple[int, ...]] = {}
    for spec, meta in zip(specs, metas):
        if spec.source[0] == "result" and spec.strides is not None and isinstance(meta, torch.Tensor):
            order = memory_order(tuple(meta.shape), spec.strides)
            if order is None and row_major and meta.dim() >= 2 and meta.is_contiguous():
                order = tuple(range(meta.dim()))
            if order is not None:
                orders.setdefault(spec.source[1], order)
    record(module, ATTR, [orders.get(k, ()) for k in range(max(orders, default=-1) + 1)])


def _compile(gm, opts: Options, rep: report.GraphReport, dump, freezer=None, relaid=None) -> CompiledGraph:
    """FX -> tn (import, the results the program computes, eager's result layouts, freezing), then the driver; the
    outputs as eager lays them out (but a forward's saved ones: saved_layouts.py). A graph compiled before (same FX
    graph, sizes and options; dynamo/warm.py) starts from its cached mem stage instead. `relaid`: the inputs not
    in eager's strides (saved_layouts.take_saved_layouts)."""
    graph_key = warm.key(gm, rep.kind, opts) if freezer is None else None
    if graph_key is not None and (compiled := _warm_start(gm, graph_key, opts, rep, relaid)) is not None:
        return compiled
    t0 = time.perf_counter()
    result = import_graph(gm, opts.eager_ops)
    module = result.module
    module.verify()
    rep.stage_seconds["tensor"] = time.perf_counter() - t0
    rep.imported, rep.fallbacks = result.imported, [(f.target, f.reason) for f in result.fallbacks]
    metas, aliased, views, derived, derive, bases = _outputs(gm, relaid)
    # the program computes no replayed view
    result.outputs, writes = drop_view_results(module, result.outputs, aliased, result.writes, derived)
    rep.input_writes = len(writes)
    specs = [output_spec(src, meta) for src, meta in zip(result.outputs, metas)]
    _record_output_layouts(module, specs, metas, rep.kind != "forward")
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    compiler.record(module, graph_args(placeholders, result.constants, (), writes), opts)  # the tensor dump continues
    dump("tensor", lambda: print_module(module))
    stable = (
        freezer.values if freezer is not None else ()
    )  # parameters of an inference graph; a training graph has none
    if freezer is not None:  # the parameters' values are not in the text: a replay starts from the freeze dump
        result.constants = freezer.apply(module, result.constants, rep)
        compiler.record(module, graph_args(placeholders, result.constants, stable, writes), opts)
        dump("freeze", lambda: print_module(module))
    checks = [_result_check(gm, result.constants)] if opts.verify else []
    built: dict[str, str] = {}

    def refold(m) -> list[torch.Tensor]:  # what tensor-opt made of the frozen constants, folded too
        new = freezer.refold(m)
        result.constants = [*result.constants, *new]
        return new

    args = graph_args(placeholders, result.constants, stable, writes)
    run = compiler.build(
        module, args, opts, rep, dump, instruments=checks, built=built, refold=refold if freezer is not None else None
    )
    if graph_key is not None and built:
        warm.remember(
            graph_key,
            warm.Record(
                built["mem_key"],
                built["matmul"],
                result.outputs,
                writes,
                dict(rep.imported),
                [(str(t), r) for t, r in rep.fallbacks],
                rep.attention,
                rep.layouts,
            ),
        )
    if rep.kind == "forward":
        specs = keep_saved_layouts(specs, getattr(run, "result_strides", None), bases)
    return CompiledGraph(
        run, specs, result.constants, getattr(run, "fresh", ()), views, writes, _effect_tokens(gm), derive
    )


def _effect_tokens(gm) -> list[int]:
    """The inputs that are AOT autograd's effect tokens (with_effects' first argument): the runtime passes None."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return [
        i
        for i, n in enumerate(placeholders)
        if n.users and all(u.target is torch.ops.higher_order.with_effects and u.args[0] is n for u in n.users)
    ]


def _outputs(gm, relaid=None):
    """The example values of the graph's outputs, the outputs that are views of its inputs (aliases.input_views:
    replayed on the `relaid` inputs it reads in eager's strides) and those that are views of other outputs
    (aliases.output_views), and the outputs these view."""
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    metas = [getattr(o, "meta", {}).get("val") for o in torch.utils._pytree.tree_flatten(out_node.args[0])[0]]
    aliased, views, reads = input_views(gm)
    if views is not None and relaid:
        views = in_eager_layouts(views, {i: s for i, s in relaid.items() if i in reads})
    return metas, aliased, views, *output_views(gm, set(aliased))


def _warm_start(gm, graph_key: str, opts: Options, rep: report.GraphReport, relaid=None) -> CompiledGraph | None:
    """The graph from its warm-start record and cached mem stage, or None (no record, an evicted mem stage, a
    target that fails on it: the caller compiles)."""
    rec = warm.recall(graph_key)
    if rec is None:
        return None
    t0 = time.perf_counter()
    found = pipeline.cached(rec.mem_key, rec.matmul)
    if found is None:
        return None
    mem, done = found
    constants = [getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    try:
        args = graph_args(placeholders, constants, (), rec.writes)
        run = compiler.resume(mem, args, opts, rep, done.lowered, key=done.key)
    except Exception as e:  # noqa: BLE001 - compiled afresh instead
        cache.log.warning("warm start of graph %d failed (%s); compiling it", rep.index, e)
        return None
    rep.stage_seconds["warm start"] = time.perf_counter() - t0 - rep.stage_seconds.get("llvm", 0.0)
    rep.imported, rep.fallbacks = Counter(rec.imported), list(rec.fallbacks)
    rep.attention, rep.layouts, rep.input_writes = rec.attention, list(rec.layouts), len(rec.writes)
    metas, _, views, _, derive, bases = _outputs(gm, relaid)
    specs = [output_spec(src, meta) for src, meta in zip(rec.outputs, metas)]
    if rep.kind == "forward":
        specs = keep_saved_layouts(specs, getattr(run, "result_strides", None), bases)
    return CompiledGraph(
        run, specs, constants, getattr(run, "fresh", ()), views, rec.writes, _effect_tokens(gm), derive
    )


def _result_check(gm, constants):
    """options={"verify": True}: random values of the graph's example sizes (SymInt hints), its constants as they are."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    from irc.ir.check import random_tensor
    from irc.targets.reference.check import reference_check

    def hint(s):
        return s if isinstance(s, int) else s.node.hint if isinstance(s, torch.SymInt) else None

    vals = [node.meta.get("val") for node in gm.graph.nodes if node.op == "placeholder"]
    shapes = [[hint(s) for s in v.shape] if isinstance(v, torch.Tensor) else hint(v) for v in vals]
    given = [None] * len(vals)
    if all(
        s is not None and (isinstance(s, int) or None not in s) for s in shapes
    ):  # else random, one size for all `?`
        gen = torch.Generator().manual_seed(0)
        with unset_fake_temporarily():
            given = [random_tensor(s, v.dtype, gen) if isinstance(v, torch.Tensor) else s for v, s in zip(vals, shapes)]
    return reference_check(seed=0, given=[*given, *constants])


def _dumper(opts: Options, rep: report.GraphReport):
    """dump(stage, text_of): write text_of() as the stage's file when dumping is on (printing a big module is
    not free: nothing is printed otherwise)."""
    if not opts.dump_dir:
        return lambda stage, text_of: None
    folder = Path(opts.dump_dir) / f"graph{rep.index:03d}-{rep.kind}"
    folder.mkdir(parents=True, exist_ok=True)
    rep.dump_dir = str(folder)
    counter = [0]

    def dump(stage: str, text_of) -> None:
        suffix = "py" if stage == "fx" else "mlir"
        (folder / f"{counter[0]:02d}-{stage}.{suffix}").write_text(text_of())
        counter[0] += 1

    return dump


def compile_function(fn, *inputs, dynamic: bool = False, **options):
    """(run, constants) for a plain function, without Dynamo or AOT autograd: make_fx with the backend's
    decompositions, import, then the driver (compiler.build) with these options (as torch.compile's). Call it as
    `run([*inputs, *constants])`; on the cpu target `run` is the Executor. For tests, benchmarks and tools."""
    from torch.fx.experimental.proxy_tensor import make_fx

    opts = Options.resolve(options=options)
    gm = make_fx(
        lambda *a: fn(*a),
        tracing_mode="symbolic" if dynamic else "fake",
        decomposition_table=decomposition_table(opts.attention),
    )(*inputs)
    result = import_graph(gm, opts.eager_ops)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    rep = report.GraphReport(index=-1, dynamo_graph=-1, kind="function")
    return compiler.build(result.module, graph_args(placeholders, result.constants), opts, rep), list(result.constants)
