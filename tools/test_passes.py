"""Passes that exist to test irc-opt itself, like MLIR's `test-*` passes: irc-opt registers them, the compiler never runs them."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, i32
from xdsl.passes import ModulePass

NON_COMMUTATIVE = ("tn.sub", "tn.div", "arith.subf", "arith.divf", "arith.subi")


@dataclass(frozen=True)
class SwapOperandsPass(ModulePass):
    """A wrong rewrite on purpose: swap the operands of non-commutative binary ops (tn.sub, tn.div, arith.subf, ...)."""

    name = "test-swap-operands"
    limit: int = -1  # swap at most this many ops (-1: all)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        swapped = 0
        for op in list(module.walk()):
            if op.name in NON_COMMUTATIVE and len(op.operands) == 2 and swapped != self.limit:
                a, b = op.operands
                op.operands = (b, a)  # same types: the IR stays valid, only the meaning changes
                swapped += 1


@dataclass(frozen=True)
class BreakTypesPass(ModulePass):
    """Leave invalid IR on purpose: declare every function to return tensor<4xi32>, which func.return contradicts."""

    name = "test-break-types"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                op.function_type = FunctionType.from_lists(op.function_type.inputs, [TensorType(i32, [4])])


TEST_PASSES: dict[str, ModulePass] = {p.name: p for p in (SwapOperandsPass(), BreakTypesPass())}
