"""Where compiled graphs run. Every target implements `Target`; `get(name)` gives the one options name.

    target = targets.get("cpu")
    run = target.compile(mem_module, args, opts, report)      # run(list_of_arguments) -> list of results

cpu (targets/cpu: llvmlite-JITed loops, library calls for products), triton (targets/triton: generated
Triton kernels) and reference (targets/reference: xDSL's interpreter, each op given its meaning by torch)
compile the stage they name in `stage`. A target imports only ir, dialects and the leaves (options,
report, log, cache): what runs the passes before it is the frontend's business.
"""

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from irc import report
from irc.options import Options

from .args import ArgSpec

Run = Callable[[Sequence[Any]], Sequence[Any]]


class TargetError(Exception):
    """The target cannot take this graph (no runtime for it, an unsupported @main); the message says why."""


class Target(Protocol):
    name: str
    stage: str  # the stage `compile` takes: "mem", or "tensor-opt" for the reference (which runs any stage)

    def machine_facts(self) -> str:
        """What of this machine decides the lowering for this target (the library paths its rules pick): part of the
        mem stage's disk-cache key, so a cache shared across machines never hands one another's lowering."""

    def conv_timer(self, opts: Options):
        """select-layout's measurement of a convolution in each layout on this target, or None (estimated)."""

    def library_allocates(self, args: list[ArgSpec]) -> Callable[[Operation], bool] | None:
        """Which tn ops' library calls allocate their results on this target, given the graph's arguments (bufferize
        takes those results as fresh buffers rather than copying them into planned ones), or None: none do."""

    def transposed_products(self, args: list[ArgSpec]) -> Callable[[Operation], bool] | None:
        """Which matrix products (loop-stage tn.mm ops) this target's library runs faster as their transpose, given
        the graph's arguments (lowering/orient_products.py computes those so), or None: none."""

    def biased_products(self, args: list[ArgSpec]) -> Callable[[Operation], bool] | None:
        """Which matrix products (loop-stage tn.mm ops) this target's library call also adds a bias to, given the
        graph's arguments (lowering/fold_bias.py joins a standalone bias add to those), or None: none."""

    def select_matmul(self, module: ModuleOp, args: list[ArgSpec], opts: Options, rep: report.GraphReport,
                      build: Callable[[str, report.GraphReport], Run | None]) -> Run | None:  # fmt: skip
        """The run of `build(matmul, rep)` for the lowering of matrix products this target picks for a
        tensor-opt module ("extern": the library's, "loops": generated). Usually one call; cpu max-autotune
        builds both for graphs of small products and keeps the faster whole graph."""

    def compile(self, module: ModuleOp, args: list[ArgSpec], opts: Options, rep: report.GraphReport,
                key: str | None = None) -> Run:  # fmt: skip
        """A runnable graph; raises TargetError when the target cannot take it. `key`, when given, is a disk-cache
        key of the module's content (the mem stage's), under which the target may keep what it derives from it."""


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


__all__ = ["ArgSpec", "Run", "Target", "TargetError", "get"]
