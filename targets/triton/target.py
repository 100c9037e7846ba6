"""The Triton target (targets.Target): a mem-stage module -> a TritonRunner whose kernels are generated
Triton source (runtime.py).

Without a GPU the kernels run under Triton's interpreter (targets/triton sets TRITON_INTERPRET=1 before
Triton is first imported). A kernel the generator cannot emit or Triton rejects runs on the reference
evaluator, and the notes list it.
options={"matmul": "dot"} runs mm/bmm with a tl.dot template that also holds the pointwise kernel after
it; "extern" (the default) calls torch's kernels. mode="max-autotune" times block sizes with
triton.autotune.
"""

import time

from irc import env
from irc.options import Options
from irc.rules import Rules

from .. import Built, Notes, TargetError, timing


class TritonTarget:
    name = "triton"
    stage = "mem"

    def rules(self, args, opts: Options) -> Rules:
        """No library rules (every extern writes a planned buffer; convolutions' layouts are estimated); products
        are generated where options ask ("dot" is the runner's own choice, after lowering)."""
        return Rules(matmuls=lambda module: ("loops",) if opts.matmul == "loops" else ("extern",))

    def compile(self, module, args, opts: Options, *, key: str | None = None, label: str = "") -> Built:
        from . import ensure_interpreter

        ensure_interpreter()
        from .runtime import TritonRunner  # imports no triton: kernels load it when they are made

        t0 = time.perf_counter()
        fallbacks: list[tuple[str, str]] = []
        try:
            runner = TritonRunner(
                module,
                autotune=opts.mode == "max-autotune",
                matmul=opts.matmul,
                fallbacks=fallbacks,
                archs=env.get("IRC_TRITON_ARCH") or (),
            )
        except Exception as e:  # noqa: BLE001 - no usable Triton (not installed, no driver)
            raise TargetError(f"triton runtime: {type(e).__name__}: {e}") from e
        notes = Notes(
            kernels=runner.kernels,
            target_fallbacks=fallbacks,
            kernel_resources=runner.resources,
            stage_seconds={"triton": time.perf_counter() - t0},
        )
        return Built(runner, notes)

    def choose(self, runs, args) -> tuple[str, str]:
        return timing.fastest(runs, timing.random_inputs(args))
