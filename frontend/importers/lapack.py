"""Dense linear algebra (dialects/tensor/lapack.py): every overload of tn.linalg's table imports as one tn.linalg
with FX's result types. Checks that raise (`check_errors=True`) stay eager calls: a pure op must not raise. linalg's
own check, which AOT autograd orders with an effect token (frontend/effects.py), imports as tn.check_linalg."""

import torch
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue

from irc.dialects import tensor as tn
from irc.dialects.tensor.lapack import BY_OVERLOAD, FUNCTIONS, option_attr

from ..aten_table import Unsupported, imports, verified


def _bind(schema, args, kwargs) -> dict:
    """The call's arguments by schema name; an argument left out is absent."""
    bound = {a.name: v for a, v in zip(schema.arguments, args)}
    bound.update(kwargs)
    return bound


def _row_major(meta) -> bool:
    """Did eager see this operand row-major? (a symbolic layout it cannot decide counts as row-major)"""
    try:
        return bool(meta.is_contiguous())
    except Exception:  # noqa: BLE001 - a data-dependent guard: the common layout
        return True


@imports(*BY_OVERLOAD)
def import_linalg(b, node, *args, **kwargs):
    name = BY_OVERLOAD[node.target]
    fn = FUNCTIONS[name]
    values, nodes = _bind(fn.schema, args, kwargs), _bind(fn.schema, node.args, node.kwargs)
    operands, options, column_major = [], {}, []
    for arg in fn.schema.arguments:
        v = values.get(arg.name)
        if "Tensor" in str(arg.type):
            if v is None:
                continue
            if not isinstance(v, SSAValue):
                raise Unsupported(f"{name}: {arg.name} is not a tensor")
            if str(arg.type).startswith("Optional"):
                options[arg.name] = UnitAttr()
            meta = nodes[arg.name].meta["val"]
            if meta.dim() >= 2 and not _row_major(meta):
                column_major.append(len(operands))
            operands.append(v)
        elif v is not None and not (arg.has_default_value() and v == arg.default_value):
            if arg.name == "check_errors":
                raise Unsupported(f"{name} with check_errors=True raises: it stays an eager call")
            options[arg.name] = option_attr(v)
    val = node.meta["val"]
    types = [b.type_of(t) for t in val] if isinstance(val, (tuple, list)) else [b.type_of(val)]
    op = b.insert(verified(tn.LinalgOp(name, options, operands, types, column_major)))
    return tuple(op.outputs) if isinstance(val, (tuple, list)) else op.outputs[0]


@imports(torch.ops.aten._linalg_check_errors.default)
def import_check_errors(b, node, info, api_name, *, is_matrix):
    if not isinstance(info, SSAValue):
        raise Unsupported("linalg's check of an info that is not a tensor")
    b.insert(verified(tn.CheckLinalgOp(info, api_name, is_matrix)))
    return ()
