"""The pass runner: apply ModulePasses in order, verify after each, time each, and hand each stage to a dump hook."""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

Dump = Callable[[str, ModuleOp], None]


@dataclass
class PassTiming:
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, dt: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + dt


def run_passes(
    ctx: Context,
    module: ModuleOp,
    passes: Sequence[ModulePass],
    *,
    verify: bool = True,
    dump: Dump | None = None,
    timing: PassTiming | None = None,
) -> ModuleOp:
    for p in passes:
        t0 = time.perf_counter()
        p.apply(ctx, module)
        if verify:
            module.verify()
        if timing is not None:
            timing.add(p.name, time.perf_counter() - t0)
        if dump is not None:
            dump(p.name, module)
    return module
