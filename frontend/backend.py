"""The torch.compile entry: Dynamo's graph -> AOT autograd -> FX import -> passes -> a runnable graph."""

import time
from pathlib import Path

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from irc import report
from irc.log import Progress, configure
from irc.log import stage as progress_stage
from irc.ir import PassTiming, make_context, print_module, run_passes
from irc.ir.check import ResultMismatch
from irc.lowering.pipeline import TENSOR_OPT, tensor_opt, with_layout
from irc.lowering.select_layout import layout_notes
from irc.options import Options
from irc.targets.reference import make_interpreter
from irc.targets.runtime import CompiledGraph, OutputSpec, output_spec
from irc.dialects import ALL_DIALECTS

from . import compile_log
from .aliases import input_views
from .decompositions import decomposition_table
from .freeze import plan as plan_freeze, static_inputs
from .fx_import import GraphUnsupported, import_graph


def backend(gm: torch.fx.GraphModule, example_inputs, *, mode=None, options=None):
    """torch.compile backend: `torch.compile(model, backend=irc.backend)` or `backend="irc"`."""
    opts = Options.resolve(mode, options)
    configure()  # IRC_LOGS
    dynamo_graph = report.new_dynamo_graph()
    compile_log.dynamo_graph(gm, dynamo_graph)

    static = static_inputs(example_inputs)  # parameters and buffers: inference graphs freeze them (frontend/freeze.py)

    def compiler(kind: str):
        return lambda fx_gm, inputs: compile_graph(fx_gm, inputs, opts, kind, dynamo_graph, static, len(example_inputs))

    aot = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(),
    )
    try:
        return aot(gm, example_inputs)
    except Exception as e:  # AOT autograd itself failed: keep the user's program running
        if opts.strict:
            raise
        compile_log.fallbacks.warning("irc: AOT autograd failed (%s); running Dynamo graph %d eagerly", e, dynamo_graph)
        g = report.new_graph(dynamo_graph, "dynamo")
        g.eager_graph = f"AOT autograd failed: {type(e).__name__}: {e}"
        return gm.forward


def compile_graph(gm: torch.fx.GraphModule, example_inputs, opts: Options, kind: str, dynamo_graph: int, static=None, n_inputs=0):
    rep = report.new_graph(dynamo_graph, kind)
    rep.nodes = sum(1 for n in gm.graph.nodes if n.op == "call_function")
    dump = _dumper(opts, rep)
    dump("fx", gm.print_readable(print_output=False))
    with Progress(compile_log.graph_name(rep)):  # a line on stderr when this takes over a second
        try:
            freezer = plan_freeze(gm, opts, kind, static, n_inputs)
            compiled = _compile(gm, opts, rep, dump, freezer)
            if freezer is not None:  # a frozen input that changes sends the calls to a compile without freezing
                compiled = freezer.guard(compiled, lambda: compile_graph(gm, example_inputs, opts, kind, dynamo_graph))
            compile_log.graph_done(rep)
            return compiled
        except GraphUnsupported as e:
            rep.eager_graph = str(e)
            compile_log.eager_graph(rep, error=False)
        except Exception as e:  # an irc bug: never the user's problem unless they asked for strict
            if opts.strict:
                raise
            compile_log.fallbacks.warning("irc: internal error compiling graph %d (%s); running it eagerly", rep.index, e,
                                          exc_info=True)  # fmt: skip
            rep.eager_graph = f"internal error: {type(e).__name__}: {e}"
    return make_boxed_func(gm.forward)


def _record_output_layouts(module, specs, metas) -> None:
    """Record on @main the layout eager gives each result (irc.output_layout: dims outermost first, [] for
    row-major or unknown); the output-layout pass computes a permuted one in it, rather than row-major and
    then copied into it by the runtime (`x.t() * 2`, channels-last results)."""
    from xdsl.dialects import func

    from irc.lowering.output_layout import ATTR, layout_attr, memory_order

    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    orders: dict[int, tuple[int, ...]] = {}
    for spec, meta in zip(specs, metas):
        if spec.source[0] == "result" and spec.strides is not None and isinstance(meta, torch.Tensor):
            order = memory_order(tuple(meta.shape), spec.strides)
            if order is not None:
                orders.setdefault(spec.source[1], order)
    if orders:
        main.attributes[ATTR] = layout_attr([orders.get(k, ()) for k in range(max(orders) + 1)])


def _compile(gm, opts: Options, rep: report.GraphReport, dump, freezer=None) -> CompiledGraph:
    t0 = time.perf_counter()
    result = import_graph(gm)
    module = result.module
    module.verify()
    rep.stage_seconds["tensor"] = time.perf_counter() - t0
    rep.imported, rep.fallbacks = result.imported, [(f.target, f.reason) for f in result.fallbacks]
    dump("tensor", print_module(module))
    if freezer is not None:
        result.constants = freezer.apply(module, result.constants, rep)
        dump("freeze", print_module(module))

    progress_stage("tensor-opt")
    timing = PassTiming()
    checks = [_result_check(gm, result.constants)] if opts.verify else []
    timer = None
    if opts.target == "cpu" and opts.layout == "auto":
        from .cpu_compile import conv_timer

        timer = conv_timer(opts)
    try:
        run_passes(make_context(ALL_DIALECTS), module, with_layout(tensor_opt(TENSOR_OPT, attention=opts.attention), opts.layout, timer), timing=timing, instruments=checks)
    except ResultMismatch as e:  # an irc bug: the graph runs eagerly (or strict raises), the report names the pass
        rep.verify_failure = str(e)
        raise
    rep.stage_seconds["tensor-opt"] = sum(timing.seconds.values())
    rep.attention = sum(op.name == "tn.sdpa" for op in module.walk())
    rep.layouts = layout_notes(module)
    compile_log.passes(rep, timing.seconds)
    dump("tensor-opt", print_module(module))

    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    metas = [getattr(o, "meta", {}).get("val") for o in torch.utils._pytree.tree_flatten(out_node.args[0])[0]]
    specs = [output_spec(src, meta) for src, meta in zip(result.outputs, metas)]
    aliased, views = input_views(gm)
    for k, i in enumerate(aliased):
        specs[i] = OutputSpec(("view", k), None, None)
    if opts.target in ("cpu", "triton"):
        from .cpu_compile import compile_cpu
        from .triton_compile import compile_triton

        _record_output_layouts(module, specs, metas)

        run = (compile_cpu if opts.target == "cpu" else compile_triton)(gm, module, result, opts, rep, dump)
        if run is not None:
            return CompiledGraph(run, specs, result.constants, getattr(run, "fresh", ()), views)
        module = import_graph(gm).module  # the tensor-opt module was consumed: start again for the reference
        if freezer is not None:
            result.constants = freezer.apply(module, result.constants, rep)
        run_passes(make_context(ALL_DIALECTS), module, tensor_opt(TENSOR_OPT, attention=opts.attention))
    progress_stage("reference")
    t0 = time.perf_counter()
    rep.target = "reference"
    interpreter = make_interpreter(module)
    compiled = CompiledGraph(lambda args: interpreter.call_op("main", tuple(args)), specs, result.constants, views=views)
    rep.stage_seconds["runtime"] = time.perf_counter() - t0
    return compiled


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
    if all(s is not None and (isinstance(s, int) or None not in s) for s in shapes):  # else random, one size for all `?`
        gen = torch.Generator().manual_seed(0)
        with unset_fake_temporarily():
            given = [random_tensor(s, v.dtype, gen) if isinstance(v, torch.Tensor) else s for v, s in zip(vals, shapes)]
    return reference_check(seed=0, given=[*given, *constants])


def _dumper(opts: Options, rep: report.GraphReport):
    if not opts.dump_dir:
        return lambda stage, text: None
    folder = Path(opts.dump_dir) / f"graph{rep.index:03d}-{rep.kind}"
    folder.mkdir(parents=True, exist_ok=True)
    rep.dump_dir = str(folder)
    counter = [0]

    def dump(stage: str, text: str) -> None:
        suffix = "py" if stage == "fx" else "mlir"
        (folder / f"{counter[0]:02d}-{stage}.{suffix}").write_text(text)
        counter[0] += 1

    return dump


