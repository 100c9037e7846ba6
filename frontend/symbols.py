"""Symbolic sizes as index SSA values: a sympy expression from Dynamo's ShapeEnv becomes arith ops on `index`."""

from collections.abc import Callable
from functools import reduce

import sympy
import torch
from torch.utils._sympy.functions import FloorDiv, Max, Min, Mod, PythonMod
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from .aten_table import Unsupported


class SymbolTable:
    """Maps each ShapeEnv symbol to a way of producing its value and caches materialised expressions.

    Every op it creates goes to `prologue`, which the importer places before the body, so a size
    computed once dominates every use."""

    def __init__(self):
        self.sources: dict[sympy.Symbol, Callable[[], SSAValue]] = {}
        self.prologue: list[Operation] = []
        self._cache: dict[sympy.Expr, SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        self.prologue.append(op)
        return op.results[0]

    def bind(self, symbol: sympy.Symbol, make: Callable[[], SSAValue]) -> None:
        self.sources.setdefault(symbol, make)

    def value(self, size) -> SSAValue:
        """An index SSA value for an int, a SymInt or a sympy expression."""
        if isinstance(size, torch.SymInt):
            size = size.node.expr
        expr = sympy.sympify(size)
        if expr not in self._cache:
            self._cache[expr] = self._build(expr)
        return self._cache[expr]

    def _build(self, e: sympy.Expr) -> SSAValue:
        if e.is_Integer:
            return self.emit(arith.ConstantOp(IntegerAttr(int(e), IndexType())))
        if e.is_Symbol:
            if e not in self.sources:
                raise Unsupported(f"symbol {e} is not bound to any graph input")
            return self.sources[e]()
        binary: dict[type, Callable] = {
            sympy.Add: arith.AddiOp,
            sympy.Mul: arith.MuliOp,
            FloorDiv: arith.FloorDivSIOp,
            Mod: arith.RemSIOp,  # torch's Mod: nonnegative operands only
            Max: arith.MaxSIOp,
            Min: arith.MinSIOp,
        }
        for kind, op_cls in binary.items():
            if isinstance(e, kind):
                parts = [self.value(a) for a in e.args]
                return reduce(lambda a, b: self.emit(op_cls(a, b)), parts)
        if isinstance(e, PythonMod):  # Python's %: the divisor's sign, as floor division gives (roll's shift - 3)
            a, b = (self.value(x) for x in e.args)
            return self.emit(arith.SubiOp(a, self.emit(arith.MuliOp(self.emit(arith.FloorDivSIOp(a, b)), b))))
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
            base = self.value(e.base)
            return reduce(lambda a, _: self.emit(arith.MuliOp(a, base)), range(int(e.exp) - 1), base)
        raise Unsupported(f"cannot express the symbolic size {e} as index arithmetic")


def is_symbolic(x) -> bool:
    return isinstance(x, torch.SymInt) and not isinstance(x.node.expr, sympy.Integer)


def concrete(x):
    """A plain int for an int or a SymInt whose value is fixed; None for a truly symbolic one."""
    if isinstance(x, int):
        return x
    if isinstance(x, torch.SymInt):
        e = x.node.expr
        return int(e) if isinstance(e, sympy.Integer) else None
    return None
