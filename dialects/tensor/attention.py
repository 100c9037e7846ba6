"""tn attention: one op for softmax(q k^T * scale + mask) v, which torch runs as scaled_dot_product_attention."""

from xdsl.dialects.builtin import Float64Type, FloatAttr, TensorType, f64, i1
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import broadcast_shapes, check_shape, element, require_float, shape, shapes_agree


@irdl_op_definition
class ScaledDotProductAttentionOp(IRDLOperation):
    """softmax(query key^T * scale + mask) value over the last two dims, batch dims equal; an i1 mask keeps the keys
    where it is true, a float mask is added to the scores (torch's scaled_dot_product_attention: a row whose every
    key is masked gives 0).
    %r = tn.sdpa %q, %k, %v mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x1x6xi1> -> tensor<2x4x8x16xf32>"""

    name = "tn.sdpa"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? `scale` `=` $scale attr-dict "
        "`:` type($query) `,` type($key) `,` type($value) (`mask` type($mask)^)? `->` type($result)"
    )

    def __init__(self, query: SSAValue, key: SSAValue, value: SSAValue, mask: SSAValue | None, scale: float):
        q, v = shape(query), shape(value)
        result_type = TensorType(element(query), [*q[:-1], v[-1]])
        operands = [query, key, value, [mask] if mask is not None else []]
        super().__init__(operands=operands, result_types=[result_type], properties={"scale": FloatAttr(float(scale), f64)})

    def verify_(self):
        q, k, v = shape(self.query), shape(self.key), shape(self.value)
        if not len(q) == len(k) == len(v) >= 3:
            raise VerifyException(f"{self.name}: query, key and value need one rank >= 3, got {len(q)}, {len(k)}, {len(v)}")
        if not element(self.query) == element(self.key) == element(self.value) == element(self.result):
            raise VerifyException(f"{self.name}: query, key, value and result must share one element type")
        require_float(self.name, element(self.query))
        check_shape(self.name, "key", k, [*q[:-2], k[-2], q[-1]])
        check_shape(self.name, "value", v, [*q[:-2], k[-2], v[-1]])
        check_shape(self.name, "result", shape(self.result), [*q[:-1], v[-1]])
        if self.mask is not None:
            m, scores = shape(self.mask), (*q[:-1], k[-2])
            if element(self.mask) not in (i1, element(self.query)):
                raise VerifyException(f"{self.name}: mask must have i1 or the query's element type, got {element(self.mask)}")
            if len(m) > len(scores) or not shapes_agree(broadcast_shapes(self.name, m, scores), scores):
                raise VerifyException(f"{self.name}: mask shape {list(m)} does not broadcast to the scores {list(scores)}")


__all__ = ["ScaledDotProductAttentionOp"]
