"""The reference executors as a per-pass result check (irc-opt --verify-each, the backend's `verify` option).

One interpreter runs every stage: func, index arithmetic, tn ops, loop nests and mem launches are
all registered, so a module mid-way between two stages runs as well as one at a stage boundary.
"""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from irc.dialects import memory
from irc.dialects import tensor as tn
from irc.ir.check import ResultCheck

from .memory import make_mem_interpreter

# Ops whose meaning depends on the element type's size or on torch's own dtype handling: a module
# holding one runs at its own precision (with tolerances) rather than widened to f64.
KEEP_PRECISION: tuple[type[Operation], ...] = (memory.ArenaOp, memory.SlotOp, arith.BitcastOp, tn.AtenCallOp)


def run_any_stage(module: ModuleOp, entry: str, args: Sequence) -> tuple:
    """Call `entry` of a module at any stage (tensor, loop, mem) on torch tensors and ints."""
    return make_mem_interpreter(module).call_op(entry, tuple(args))


def reference_check(seed: int = 0, given: Sequence = ()) -> ResultCheck:
    """A ResultCheck on the reference executors; `given[i]` (not None) replaces random argument i."""
    return ResultCheck(run_any_stage, seed=seed, given=given, keep=lambda op: isinstance(op, KEEP_PRECISION))
