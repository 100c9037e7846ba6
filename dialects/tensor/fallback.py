"""tn.aten_call: the explicit eager fallback. It runs one aten overload on its operands inside the compiled graph.

`args` is a Python literal of the call's arguments in which {"t": i} stands for operand i and
{"dtype": "float32"} (likewise "device", "layout", "memory_format") for torch enums, so the text
round-trips and the reference executor can rebuild the call.
"""

import ast

import torch
from torch._ops import OpOverload
from torch.fx import Node
from xdsl.dialects.builtin import StringAttr
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, var_operand_def, var_result_def
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class AtenCallOp(IRDLOperation):
    """Eager call of an aten overload, with the reason irc did not translate it.
    %r:2 = tn.aten_call "aten::sort.default" args = "[{'t': 0}, -1, False]" reason = "no importer" (%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>)"""

    name = "tn.aten_call"
    target = prop_def(StringAttr)
    args = prop_def(StringAttr)
    reason = prop_def(StringAttr)
    inputs = var_operand_def()
    outputs = var_result_def()
    assembly_format = (
        "$target `args` `=` $args `reason` `=` $reason `(` $inputs `)` attr-dict `:` "
        "`(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(self, target: str, args: str, reason: str, inputs, result_types):
        props = {"target": StringAttr(target), "args": StringAttr(args), "reason": StringAttr(reason)}
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], properties=props)

    def verify_(self):
        if "::" not in self.target.data:
            raise VerifyException(f'{self.name}: target must be a qualified overload such as "aten::sort.default"')
        try:
            ast.literal_eval(self.args.data)
        except (ValueError, SyntaxError) as e:
            raise VerifyException(f"{self.name}: args is not a Python literal: {e}") from None


# ---- the call format, shared by the importer (encode) and the executors (decode) --------------------


class CannotEncode(ValueError):
    """An argument that the literal template cannot carry."""


def overload_name(op: OpOverload) -> str:
    return f"{op._schema.name}.{op._overloadname}"


def resolve_overload(name: str) -> OpOverload:
    """The inverse of overload_name: "aten::sort.default" -> torch.ops.aten.sort.default."""
    qualified, overload = name.rsplit(".", 1)
    ns, op = qualified.split("::")
    return getattr(getattr(getattr(torch.ops, ns), op), overload)


def encode_args(args, kwargs, operand_of) -> str:
    """The literal template of a fallback call; operand_of(node) gives the operand index of an FX node."""

    def enc(a):
        if isinstance(a, Node):
            return operand_of(a)
        if isinstance(a, (list, tuple)):
            return [enc(x) for x in a]
        if isinstance(a, torch.dtype):
            return {"dtype": str(a).removeprefix("torch.")}
        if isinstance(a, torch.device):
            return {"device": str(a)}
        if isinstance(a, torch.layout):
            return {"layout": str(a).removeprefix("torch.")}
        if isinstance(a, torch.memory_format):
            return {"memory_format": str(a).removeprefix("torch.")}
        if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
            return {"float": repr(a)}
        if a is None or isinstance(a, (bool, int, float, str)):
            return a
        raise CannotEncode(f"cannot pass {type(a).__name__} to an eager fallback")

    return repr((enc(list(args)), {k: enc(v) for k, v in kwargs.items()}))


def decode_args(text: str, operands):
    """Rebuild (args, kwargs) of a fallback call from its template and the operand values."""

    def dec(a):
        if isinstance(a, dict):
            ((kind, v),) = a.items()
            if kind == "t":
                return operands[v]
            if kind == "dtype":
                return getattr(torch, v)
            if kind == "device":
                return torch.device(v)
            if kind in ("layout", "memory_format"):
                return getattr(torch, v)
            if kind == "float":
                return float(v)
            raise ValueError(f"unknown fallback argument kind {kind}")
        if isinstance(a, list):
            return [dec(x) for x in a]
        return a

    args, kwargs = ast.literal_eval(text)
    return dec(args), {k: dec(v) for k, v in kwargs.items()}
