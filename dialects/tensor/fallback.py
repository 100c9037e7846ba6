"""tn.aten_call: the explicit eager fallback. It runs one aten overload on its operands inside the compiled graph.

`args` is a Python literal of the call's arguments in which {"t": i} stands for operand i and
{"dtype": "float32"} (likewise "device", "layout", "memory_format") for torch enums, so the text
round-trips and the reference executor can rebuild the call.
"""

import ast

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
