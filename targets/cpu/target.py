"""The CPU target (targets.Target): a mem-stage module -> an Executor of a graph compiled once for it.

Matrix products and convolutions call torch's libraries (libs/); everything else runs as llvmlite-JITed,
vectorised, multi-threaded loops (codegen/, run by runtime/). A kernel the emitter cannot take runs on the
mem-stage reference evaluator inside an otherwise JITed graph, and the notes list it (a limitation of the
target, not an error: options={"strict": True} leaves it so).

    compile = Compiled (runtime/compiled.py: planned, specialised, emitted, JITed)
            + tune (max-autotune: runtime/autotune.py measures each launch's variants -> Choices)
            + Executor (runtime/executor.py: runs calls)
"""

import math
import time
from dataclasses import replace

from irc.dialects import tensor as tn
from irc.ir.types import DYN
from irc.log import stage as progress_stage
from irc.options import Options
from irc.rules import Rules

from .. import Built, Notes, TargetError


class CpuTarget:
    name = "cpu"
    stage = "mem"

    def rules(self, args, opts: Options) -> Rules:
        """The library paths' rules over these arguments (libs/mm_rules.py): oneDNN's products by a stable weight
        allocate their results and add a bias in their own pass; products with few rows and a changing weight run
        faster as their transpose (f32 on MKL, bf16 on oneDNN's AMX kernel). Convolutions are timed in each layout, once per shape."""
        import torch

        from irc.dialects.semantics.quant import onednn_exact

        from .libs.conv_layout import conv_seconds
        from .libs.externs import (
            amx_bf16_products,
            mkl_branch,
            narrow_products,
            onednn_outruns_mkl,
            widened_attention_backward,
            widened_products,
        )
        from .libs.mm_rules import allocates_result, computes_transposed
        from .runtime.jit import host, start_worker

        start_worker()  # its start overlaps the passes, before the graph's first module needs it
        stable = frozenset(i for i, a in enumerate(_packable(args, opts)) if a.stable)
        allocates = lambda op: allocates_result(op, stable)  # noqa: E731
        return Rules(
            facts=f"cpu={host().cpu} mkl_branch={mkl_branch()} onednn_outruns_mkl={onednn_outruns_mkl()} "
            f"narrow_products={','.join(narrow_products())} amx_bf16={amx_bf16_products()} int8_exact={onednn_exact()}",
            conv_timer=(lambda **problem: conv_seconds(**_as_run(problem), use_cache=opts.cache))
            if opts.layout == "auto"
            else None,
            library_allocates=allocates,
            transposed_products=lambda op: computes_transposed(op, args, stable),
            biased_products=allocates,
            library_addmm=narrow_products(),
            int8_products=torch.backends.mkldnn.is_available() and onednn_exact(),
            weight_int8_products=True,
            widened_products=widened_products(),
            widened_attention_backward=widened_attention_backward(),
            matmuls=lambda module: _matmul_candidates(module, opts),
        )

    def compile(self, module, args, opts: Options, *, key: str | None = None, label: str = "") -> Built:
        from torch._subclasses.fake_tensor import unset_fake_temporarily

        from .runtime import launcher
        from .runtime.compiled import Compiled
        from .runtime.executor import Executor

        progress_stage("llvm")
        t0 = time.perf_counter()
        try:
            args = _packable(args, opts)
            compiled = Compiled(module, args, mode=opts.mode, key=key)
            compiled.build(cache=opts.cache)
            with unset_fake_temporarily():  # compiling runs under Dynamo's fake mode: the arena must be real
                run = Executor(compiled, label)
                tuned = _tune(compiled, run, lambda: Compiled(module, args, mode=opts.mode), opts)
        except Exception as e:  # noqa: BLE001 - the runtime cannot take this @main
            raise TargetError(f"cpu runtime: {type(e).__name__}: {e}") from e
        error = compiled.launcher_error or run.launcher_error
        notes = Notes(
            kernels=compiled.kernels,
            cache_hit=compiled.cache_hit if compiled.kernels else None,
            target_fallbacks=list(compiled.fallbacks),
            python_steps=run.python_steps,
            mode_notes=([error] if error else launcher.describe(compiled)) + tuned,
            compile_notes=[compiled.lib.note] if compiled.lib is not None and compiled.lib.note else [],
            extern_paths=compiled.extern_paths,
            in_place_writes=len(compiled.g.in_place),
            stage_seconds={"llvm": time.perf_counter() - t0},
            call_source=run.call_source,
        )
        return Built(run, notes)

    def choose(self, runs, args) -> tuple[str, str]:
        """The fastest whole call on random inputs of the compiled sizes (runtime/autotune.py)."""
        from .runtime.autotune import fastest_call

        return fastest_call(runs, args)


def _as_run(problem: dict) -> dict:
    """A convolution problem in the dtype the library will run it in: a narrow dtype without kernels of its own here
    (widened_products) is a float32 convolution (split-addmm), so timing it in the narrow dtype would time torch's
    reference loop, slow to measure and beside the point."""
    from .libs.externs import widened_products

    narrow = {"bf16": "bfloat16", "f16": "float16"}.get(problem["dtype"])
    return {**problem, "dtype": "f32"} if narrow in widened_products() else problem


def _packable(args, opts: Options) -> list:
    """The arguments a library path may keep prepacked (stable), by the prepack option: by default a convolution's
    weight (more than two dims; its packed path is 1.6x faster) but not a linear layer's (2-D; a few percent faster,
    where BERT-base's second copy would be 340 MB); True every stable one, False none."""
    if opts.prepack:
        return args
    return [replace(a, stable=False) if a.stable and (opts.prepack is False or len(a.sizes) <= 2) else a for a in args]


def _tune(compiled, run, make, opts: Options) -> list[str]:
    """max-autotune on a static graph: each launch's variants measured (autotune.tune), then the tuned build kept
    only where it beats the default as a whole call; the report's lines."""
    from .runtime import alloc, autotune

    if opts.mode != "max-autotune" or not compiled.static or not (compiled.kernels or compiled.launch_plan):
        return []
    try:
        choices, notes = autotune.tune(compiled, run, opts.cache)
    except Exception as e:  # noqa: BLE001 - measuring failed: the default variants stay
        return [f"autotune failed ({type(e).__name__}: {e}); default variants"]
    finally:
        alloc.release_freed()  # the variant modules measured and dropped
    if choices is not None:
        keep, note = autotune.whole_program(run, choices, opts.cache, make)
        alloc.release_freed()  # the tuned build measured against the default
        notes.append(note)
        if keep:
            run.rebuild(choices, cache=opts.cache)
    return notes


def _matmul_candidates(module, opts: Options) -> tuple[str, ...]:
    """The library's products, or generated ones where options ask; max-autotune also builds a graph of small
    static products with generated ones, and keeps the faster whole graph."""
    if opts.matmul != "auto" or opts.mode != "max-autotune":
        return ("loops",) if opts.matmul == "loops" else ("extern",)
    from .runtime.autotune import SMALL_MACS

    products = (op for op in module.walk() if isinstance(op, tn.MmOp | tn.BmmOp))
    sizes = [(op.lhs.type.get_shape(), op.rhs.type.get_shape()[-1]) for op in products]
    small = bool(sizes) and all(DYN not in (*a, n) and math.prod(a) * n <= SMALL_MACS for a, n in sizes)
    return ("extern", "loops") if small else ("extern",)
