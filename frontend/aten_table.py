"""The one table of importers: aten OpOverload -> function that builds tn ops for an FX node.

An importer is `fn(b, node, *args, **kwargs)`: `b` is the ImportBuilder, `node` the FX node
(for its meta), and args are the node's arguments with FX nodes replaced by SSA values
(tensors, or index values for SymInts). It returns the SSA value(s) of the node's result(s),
or raises Unsupported(reason) before building anything irreversible, and the node becomes
an eager `tn.aten_call`.
"""

from collections.abc import Callable

from torch._ops import OpOverload
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

IMPORTERS: dict[OpOverload, Callable] = {}


class Unsupported(Exception):
    """This node (with these arguments) has no translation; the reason goes to the compile report."""


def verified(op: Operation) -> Operation:
    """`op`, or Unsupported with its verifier's reason (a call tn's op cannot hold) and its operand uses dropped: a
    refused op left as a use of its operands is met again by later walks of their uses."""
    try:
        op.verify()
    except VerifyException as e:
        op.drop_all_references()
        raise Unsupported(str(e)) from None
    return op


def imports(*overloads: OpOverload):
    def register(fn: Callable) -> Callable:
        for o in overloads:
            assert o not in IMPORTERS, f"duplicate importer for {o}"
            IMPORTERS[o] = fn
        return fn

    return register


def load_all() -> dict[OpOverload, Callable]:
    """Import every importer module (each registers itself) and return the table."""
    from . import importers  # noqa: F401

    return IMPORTERS
