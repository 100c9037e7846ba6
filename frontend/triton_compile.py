"""The backend's Triton path: tensor-opt -> loop -> mem (lowering/pipeline.lower, with the CPU path's disk
cache of mem stages) -> a TritonRunner whose kernels are generated Triton source.

Without a GPU the kernels run under Triton's interpreter (targets/triton sets TRITON_INTERPRET=1 before
Triton is first imported). Nothing here may break the user's program: a lowering failure sends the graph
to the tensor-level reference (the caller does that when this returns None), a kernel the generator
cannot emit or Triton rejects runs on the reference evaluator, and the report lists each with its reason.
options={"matmul": "dot"} runs mm/bmm with a tl.dot template that also holds the pointwise kernel after
it; "extern" (the default) calls torch's kernels. mode="max-autotune" times block sizes with
triton.autotune.
"""

import logging
import time

from irc import report
from irc.options import Options

from .cpu_compile import STRICT, graph_args, lower_to_mem

log = logging.getLogger("irc.fallbacks")  # irc.log topic


def compile_triton(gm, module, result, opts: Options, rep: report.GraphReport, dump):
    """The runnable graph for a tensor-opt module (consumed), or None when lowering fails."""
    from irc.targets.cpu import cache
    from irc.targets.triton import ensure_interpreter

    ensure_interpreter()
    from irc.targets.triton.runtime import TritonRunner  # imports no triton: kernels load it when they are made

    args = graph_args(gm, result)
    module = lower_to_mem(module, args, opts, rep, dump)
    if module is None:
        return None
    t0 = time.perf_counter()
    try:
        with cache.enabled(opts.cache):
            runner = TritonRunner(module, autotune=opts.mode == "max-autotune", matmul=opts.matmul, fallbacks=rep.target_fallbacks)
    except Exception as e:  # no usable Triton (not installed, no driver): the mem-stage reference runs the graph
        if STRICT:
            raise
        from irc.targets.reference.memory import MemRunner

        log.warning("irc: the triton runtime cannot take graph %d (%s); it runs on the mem-stage reference", rep.index, e)
        rep.target, rep.target_fallbacks = "triton", [("graph", f"triton runtime: {type(e).__name__}: {e}")]
        return MemRunner(module)
    rep.target, rep.kernels = "triton", runner.kernels
    if STRICT and runner.fallbacks:
        raise RuntimeError(f"triton target fallbacks: {runner.fallbacks}")
    rep.stage_seconds["triton"] = time.perf_counter() - t0
    return runner


def runner_for(fn, *inputs, dynamic: bool = False, **kw):
    """(TritonRunner, constants) for a plain function, without Dynamo: make_fx with the backend's
    decompositions, import, tensor-opt, lower. Call as `runner([*inputs, *constants])`. For tests."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from irc.dialects import ALL_DIALECTS
    from irc.ir import make_context, run_passes
    from irc.lowering.pipeline import TENSOR_OPT, lower
    from irc.targets.triton import ensure_interpreter

    ensure_interpreter()
    from irc.targets.triton.runtime import TritonRunner

    from .decompositions import decomposition_table
    from .fx_import import import_graph

    gm = make_fx(lambda *a: fn(*a), tracing_mode="symbolic" if dynamic else "fake",
                 decomposition_table=decomposition_table())(*inputs)  # fmt: skip
    res = import_graph(gm)
    run_passes(make_context(ALL_DIALECTS), res.module, TENSOR_OPT)
    lower(res.module)
    return TritonRunner(res.module, **kw), list(res.constants)
