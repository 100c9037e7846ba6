"""Reference execution of the tn ops: each op runs its meaning (dialects/semantics) under xDSL's
interpreter. This is the test oracle."""

from xdsl.dialects import arith
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions

from irc.dialects.semantics import SEMANTICS


def _make_impl(fn):
    def run(self, interpreter: Interpreter, op, args):
        out = fn(op, *args)
        return out if isinstance(out, tuple) else (out,)

    return run


class _Index(ArithFunctions):
    """Index arithmetic for symbolic sizes: xDSL covers +, *, floordiv, rem; irc adds max and min."""

    @impl(arith.MaxSIOp)
    def run_maxsi(self, interpreter, op, args):
        return (max(args),)

    @impl(arith.MinSIOp)
    def run_minsi(self, interpreter, op, args):
        return (min(args),)


def _build_functions():
    attrs = {f"run_{cls.__name__}": impl(cls)(_make_impl(fn)) for cls, fn in SEMANTICS.items()}
    return register_impls(type("TensorFunctions", (InterpreterFunctions,), attrs))


TensorFunctions = _build_functions()
IndexFunctions = register_impls(_Index)
