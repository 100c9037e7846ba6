"""Reference execution: xDSL's interpreter over irc IR, each op given its meaning by a torch call
(dialects/semantics)."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from .tensor import IndexFunctions, TensorFunctions

__all__ = ["make_interpreter", "run_module"]


def make_interpreter(module: ModuleOp) -> Interpreter:
    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), IndexFunctions(), TensorFunctions()):
        interpreter.register_implementations(functions)
    return interpreter


def run_module(module: ModuleOp, args, entry: str = "main") -> tuple:
    return make_interpreter(module).call_op(entry, tuple(args))
