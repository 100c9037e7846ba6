"""Where compiled graphs run. Every target implements `Target`; `get(name)` gives the one options name.

    target = targets.get("cpu")
    rules = target.rules(args, opts)                      # what the passes should know (rules.Rules)
    run, notes = target.compile(mem_module, args, opts)   # run(list_of_arguments) -> list of results
    label, why = target.choose({"extern": run_a, "loops": run_b}, args)

cpu (targets/cpu: llvmlite-JITed loops, library calls for products), triton (targets/triton: generated
Triton kernels) and reference (targets/reference: xDSL's interpreter, each op given its meaning by torch)
compile the stage they name in `stage`. A target never calls back into the driver (compiler.py): it answers,
and the driver writes the report from its `Notes`. A target imports only ir, dialects and the leaves.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from xdsl.dialects.builtin import ModuleOp

from irc.options import Options
from irc.rules import Rules

from .args import ArgSpec

Run = Callable[[Sequence[Any]], Sequence[Any]]


class TargetError(Exception):
    """The target cannot take this graph (no runtime for it, an unsupported @main); the message says why."""


@dataclass
class Notes:
    """What a target's compile tells the compile report (report.GraphReport's fields of the same names)."""

    kernels: int = 0  # cpu: JITed kernel functions; triton: generated Triton kernels
    cache_hit: bool | None = None  # the machine code came from the on-disk cache
    target_fallbacks: list[tuple[str, str]] = field(default_factory=list)  # (kernel or extern, why on the reference)
    python_steps: int | None = None  # Python-level steps one call runs
    mode_notes: list[str] = field(default_factory=list)  # what the mode did (launchers, autotuned choices)
    compile_notes: list[str] = field(default_factory=list)  # cpu: machine code compiled at a cheaper level, and why
    extern_paths: dict[str, str] = field(default_factory=dict)  # the runtime's own dict: calls fill it as they decide
    in_place_writes: int = 0  # inputs written in their own memory
    kernel_resources: list[str] = field(default_factory=list)  # triton: registers, spills, shared memory per kernel
    stage_seconds: dict[str, float] = field(default_factory=dict)  # the target's stages ("llvm", "triton")
    call_source: str | None = None  # what one call runs, as Python (dumped beside the stages)


class Built(NamedTuple):
    run: Run
    notes: Notes


class Target(Protocol):
    name: str
    stage: str  # the stage `compile` takes: "mem", or "tensor-opt" for the reference (which runs any stage)

    def rules(self, args: list[ArgSpec], opts: Options) -> Rules:
        """What the passes should know of this target's libraries and machine for a graph of these arguments."""

    def compile(
        self, module: ModuleOp, args: list[ArgSpec], opts: Options, *, key: str | None = None, label: str = ""
    ) -> Built:
        """A runnable graph and its notes; raises TargetError when the target cannot take it. `key`, when given, is
        a disk-cache key of the module's content, under which the target may keep what it derives from it.
        `label` ("graph3") names the graph in profiler events."""

    def choose(self, runs: dict[str, Run], args: list[ArgSpec]) -> tuple[str, str]:
        """(label, note): the run to keep among builds of one graph lowered differently (the first is the
        incumbent), and why."""


def get(name: str) -> Target:
    if name == "cpu":
        from .cpu.target import CpuTarget

        return CpuTarget()
    if name == "triton":
        from .triton.target import TritonTarget

        return TritonTarget()
    if name == "reference":
        from .reference.target import ReferenceTarget

        return ReferenceTarget()
    raise ValueError(f"irc: unknown target {name!r}")


__all__ = ["ArgSpec", "Built", "Notes", "Run", "Target", "TargetError", "get"]
