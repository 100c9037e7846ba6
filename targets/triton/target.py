"""The Triton target (targets.Target): a mem-stage module -> a TritonRunner whose kernels are generated
Triton source (runtime.py).

Without a GPU the kernels run under Triton's interpreter (targets/triton sets TRITON_INTERPRET=1 before
Triton is first imported). A kernel the generator cannot emit or Triton rejects runs on the reference
evaluator, and the report lists it.
options={"matmul": "dot"} runs mm/bmm with a tl.dot template that also holds the pointwise kernel after
it; "extern" (the default) calls torch's kernels. mode="max-autotune" times block sizes with
triton.autotune.
"""

import time

from irc import env, report
from irc.options import Options

from .. import TargetError


class TritonTarget:
    name = "triton"
    stage = "mem"

    def machine_facts(self) -> str:
        return ""  # its lowering reads nothing of the machine

    def conv_timer(self, opts: Options):
        return None  # select-layout estimates from the flops

    def library_allocates(self, args):
        return None  # every extern writes a planned buffer

    def transposed_products(self, args):
        return None  # every product is computed as it is written

    def biased_products(self, args):
        return None  # a bias is added by a kernel of its own

    def select_matmul(self, module, args, opts: Options, rep: report.GraphReport, build):
        return build("loops" if opts.matmul == "loops" else "extern", rep)  # "dot" is the runner's, after lowering

    def compile(self, module, args, opts: Options, rep: report.GraphReport, key: str | None = None):
        from . import ensure_interpreter

        ensure_interpreter()
        from .runtime import TritonRunner  # imports no triton: kernels load it when they are made

        t0 = time.perf_counter()
        try:
            runner = TritonRunner(module, autotune=opts.mode == "max-autotune", matmul=opts.matmul, fallbacks=rep.target_fallbacks,
                                  archs=env.get("IRC_TRITON_ARCH") or ())  # fmt: skip
        except Exception as e:  # noqa: BLE001 - no usable Triton (not installed, no driver)
            raise TargetError(f"triton runtime: {type(e).__name__}: {e}") from e
        rep.target, rep.kernels, rep.kernel_resources = "triton", runner.kernels, runner.resources
        rep.stage_seconds["triton"] = time.perf_counter() - t0
        return runner
