"""The CPU target (targets.Target): a mem-stage module -> a JITed Program (program.py).

Matrix products and convolutions call torch's libraries (externs.py); everything else runs as
llvmlite-JITed, vectorised, multi-threaded loops. A kernel the emitter cannot take runs on the
mem-stage reference evaluator inside an otherwise JITed graph, and the report lists it (a limitation of
the target, not an error: options={"strict": True} leaves it so).
"""

import copy
import math
import time
from pathlib import Path

from irc import cache, report
from irc.dialects import tensor as tn
from irc.ir import print_module
from irc.ir.types import DYN
from irc.log import stage as progress_stage
from irc.options import Options

from .. import TargetError


class CpuTarget:
    name = "cpu"
    stage = "mem"

    def machine_facts(self) -> str:
        """Which library runs a changing weight's products here (externs.linear_rule): the results bufferize takes as
        oneDNN allocates them and the products fold-bias and orient-products rewrite follow it."""
        from .libs.externs import onednn_outruns_mkl

        return f"onednn_outruns_mkl={onednn_outruns_mkl()}"

    def conv_timer(self, opts: Options):
        """torch's convolution in each layout, measured once per shape and kept in the on-disk cache."""
        from .libs.conv_layout import conv_seconds

        return lambda **problem: conv_seconds(**problem, use_cache=opts.cache)

    def library_allocates(self, args):
        """oneDNN's products (a constant weight's prepacked one) allocate their results: bufferize takes them as
        they come instead of copying each into a planned buffer (BERT's 24 products: 2.7 ms a call)."""
        from .libs.mm_rules import allocates_result

        stable = frozenset(i for i, a in enumerate(args) if a.stable)
        return lambda op: allocates_result(op, stable)

    def transposed_products(self, args):
        """f32 products with few rows and a changing weight: MKL runs them faster as their transpose."""
        from .libs.mm_rules import computes_transposed

        stable = frozenset(i for i, a in enumerate(args) if a.stable)
        return lambda op: computes_transposed(op, args, stable)

    def biased_products(self, args):
        """oneDNN's products add a bias in their own pass, and they are the products whose results it allocates."""
        return self.library_allocates(args)

    def select_matmul(self, module, args, opts: Options, rep: report.GraphReport, build):
        """`build(matmul, rep)` for the lowering of matrix products opts asks for. max-autotune on a graph of
        small products builds it with generated and with library matmuls and keeps the faster whole graph
        (measured once; the choice kept in the disk cache under the tensor-opt text and the arguments)."""
        if opts.matmul != "auto" or opts.mode != "max-autotune" or not small_matmuls(module):
            return build("loops" if opts.matmul == "loops" else "extern", rep)
        from .runtime import autotune
        from .runtime.program import Program

        key = autotune.matmul_key(print_module(module), repr(args))
        rec = cache.get_json("autotune", key) if opts.cache else None
        if rec is not None:
            run = build(rec["matmul"], rep)
            if isinstance(run, Program):
                rep.mode_notes.append(f"matmul: {rec['note']} (from the disk cache)")
            return run
        built = {c: (build(c, r), r) for c, r in (("loops", copy.deepcopy(rep)), ("extern", copy.deepcopy(rep)))}
        programs = {c: built[c][0] for c in ("extern", "loops") if isinstance(built[c][0], Program)}  # the incumbent first
        if len(programs) < 2:  # one of them could not be built for the CPU: take the other as it is
            choice = "extern" if isinstance(built["extern"][0], Program) else "loops"
            rep.__dict__.update(built[choice][1].__dict__)
            return built[choice][0]
        choice, note = autotune.choose_program(programs)
        if opts.cache and cache.quiet():
            cache.put_json("autotune", key, {"matmul": choice, "note": note})
        rep.__dict__.update(built[choice][1].__dict__)
        rep.mode_notes.append(f"matmul: {note} (measured)")
        return built[choice][0]

    def compile(self, module, args, opts: Options, rep: report.GraphReport, key: str | None = None):
        from .runtime.program import Program

        progress_stage("llvm")
        t0 = time.perf_counter()
        try:
            program = Program(module, args, cache=opts.cache, mode=opts.mode, graph=rep.index, key=key)
        except Exception as e:  # noqa: BLE001 - the runtime cannot take this @main
            raise TargetError(f"cpu runtime: {type(e).__name__}: {e}") from e
        finally:
            rep.stage_seconds["llvm"] = time.perf_counter() - t0
        rep.target, rep.kernels, rep.cache_hit = "cpu", program.kernels, program.cache_hit if program.kernels else None
        rep.target_fallbacks = list(program.fallbacks)
        rep.mode, rep.python_steps, rep.mode_notes = opts.mode, program.python_steps, list(program.mode_notes)
        rep.extern_paths = program.extern_paths  # the program's own dict: calls fill it as they decide
        rep.in_place_writes = len(program.g.in_place)
        if rep.dump_dir and program.call_source:  # beside the stages: what one call runs, as Python
            Path(rep.dump_dir, "call.py").write_text(program.call_source)
        return program


def small_matmuls(module) -> bool:
    """Whether the module has matrix products and every one is static and at most SMALL_MACS multiply-adds:
    the products for which max-autotune measures generated against library code."""
    from .runtime.autotune import SMALL_MACS

    sizes = [(op.lhs.type.get_shape(), op.rhs.type.get_shape()[-1]) for op in module.walk() if isinstance(op, tn.MmOp | tn.BmmOp)]
    return bool(sizes) and all(DYN not in (*a, n) and math.prod(a) * n <= SMALL_MACS for a, n in sizes)
