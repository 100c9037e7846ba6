"""The reference target (targets.Target): xDSL's interpreter over the module at whatever stage it is,
each op given its meaning by a torch call. The fallback of the others: it runs every graph they cannot."""

import time

from irc.options import Options
from irc.rules import Rules

from .. import Built, Notes, timing


class ReferenceTarget:
    name = "reference"
    stage = "tensor-opt"

    def rules(self, args, opts: Options) -> Rules:
        """No library rules: every extern writes a planned buffer, every product is computed as written and a bias
        is added by a kernel of its own; convolutions' layouts are estimated."""
        return Rules()

    def compile(self, module, args, opts: Options, *, key: str | None = None, label: str = "") -> Built:
        """Runs a tn module (tensor or tensor-opt stage) or a mem-stage one."""
        from irc.dialects import memory

        t0 = time.perf_counter()
        if any(isinstance(op, memory.LaunchOp | memory.ExternOp | memory.ArenaOp) for op in module.walk()):
            from .memory import MemRunner

            run = MemRunner(module)
        else:
            from . import make_interpreter

            interpreter = make_interpreter(module)
            run = lambda args: interpreter.call_op("main", tuple(args))  # noqa: E731
        return Built(run, Notes(stage_seconds={"reference": time.perf_counter() - t0}))

    def choose(self, runs, args) -> tuple[str, str]:
        return timing.fastest(runs, timing.random_inputs(args))
