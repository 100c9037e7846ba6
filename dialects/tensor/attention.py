"""tn attention: one op for softmax(q k^T * scale + mask) v, which torch runs as scaled_dot_product_attention, and
its gradient. In a training graph the forward also gives each query row's logsumexp, which the backward reads: the
pair runs as torch's CPU flash-attention kernels, as in eager."""

from xdsl.dialects.builtin import Float64Type, FloatAttr, TensorType, UnitAttr, bf16, f16, f32, f64, i1
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import broadcast_shapes, check_shape, element, require_float, shape, shapes_agree


def _verify_attention(op, q, k, v, mask) -> None:
    if not len(q) == len(k) == len(v) >= 3:
        raise VerifyException(f"{op.name}: query, key and value need one rank >= 3, got {len(q)}, {len(k)}, {len(v)}")
    if not element(op.query) == element(op.key) == element(op.value):
        raise VerifyException(f"{op.name}: query, key and value must share one element type")
    require_float(op.name, element(op.query))
    check_shape(op.name, "key", k, [*q[:-2], k[-2], q[-1]])
    check_shape(op.name, "value", v, [*q[:-2], k[-2], v[-1]])
    if mask is not None:
        m, scores = shape(mask), (*q[:-1], k[-2])
        if element(mask) not in (i1, element(op.query)):
            raise VerifyException(f"{op.name}: mask must have i1 or the query's element type, got {element(mask)}")
        if len(m) > len(scores) or not shapes_agree(broadcast_shapes(op.name, m, scores), scores):
            raise VerifyException(f"{op.name}: mask shape {list(m)} does not broadcast to the scores {list(scores)}")


def logsumexp_element(query_element):
    """The logsumexp's element type: float32 for half-precision queries (torch's flash kernel accumulates in it)."""
    return f32 if query_element in (f16, bf16) else query_element


def _heads_after_rows(shape: list, heads_last: bool) -> list:
    """`shape` with its heads dim (-3) after its rows (-2) when heads_last: (batch, rows, heads, d)."""
    return [*shape[:-3], shape[-2], shape[-3], shape[-1]] if heads_last else list(shape)


def _result_shape(q, v, heads_last: bool) -> list:
    return _heads_after_rows([*q[:-1], v[-1]], heads_last)


def _logsumexp_shape(q, heads_last: bool) -> list:
    """(batch, heads, rows), or (batch, rows, heads) when heads_last: the layout torch's CPU flash kernel writes."""
    return [*q[:-3], q[-2], q[-3]] if heads_last else list(q[:-1])


def _flags(scale: float, causal: bool) -> dict:
    return {"scale": FloatAttr(float(scale), f64), **({"causal": UnitAttr()} if causal else {})}


@irdl_op_definition
class ScaledDotProductAttentionOp(IRDLOperation):
    """softmax(query key^T * scale + mask) value over the last two dims, batch dims equal; an i1 mask keeps the keys
    where it is true, a float mask is added to the scores, `causal` also hides the keys after each query (torch's
    scaled_dot_product_attention: a row whose every key is masked gives 0). With a second result, each query row's
    logsumexp of the scores (the forward of training: tn.sdpa_backward reads it). `heads_last` gives the result
    with its heads dim (-3) after the query rows (-2): (batch, rows, heads, d), the layout the head merge reshapes
    and torch's CPU flash kernel writes, and the logsumexp as (batch, rows, heads), as that kernel writes it.
    %r = tn.sdpa %q, %k, %v mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x1x6xi1> -> tensor<2x4x8x16xf32>
    %h = tn.sdpa %q, %k, %v scale = 0.25 heads_last : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x8x4x16xf32>"""

    name = "tn.sdpa"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    heads_last = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    logsumexp = opt_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? `scale` `=` $scale (`causal` $causal^)? (`heads_last` $heads_last^)? attr-dict "
        "`:` type($query) `,` type($key) `,` type($value) (`mask` type($mask)^)? `->` type($result) (`,` type($logsumexp)^)?"
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None,
        scale: float,
        causal: bool = False,
        logsumexp: bool = False,
        heads_last: bool = False,
    ):
        q, v = shape(query), shape(value)
        lse = [TensorType(logsumexp_element(element(query)), _logsumexp_shape(q, heads_last))] if logsumexp else []
        types = [TensorType(element(query), _result_shape(q, v, heads_last)), lse]
        operands = [query, key, value, [mask] if mask is not None else []]
        props = _flags(scale, causal) | ({"heads_last": UnitAttr()} if heads_last else {})
        super().__init__(operands=operands, result_types=types, properties=props)

    def verify_(self):
        q, k, v = shape(self.query), shape(self.key), shape(self.value)
        _verify_attention(self, q, k, v, self.mask)
        if element(self.result) != element(self.query):
            raise VerifyException(f"{self.name}: query, key, value and result must share one element type")
        if self.heads_last is not None and len(q) < 4:
            raise VerifyException(f"{self.name}: heads_last needs a heads dim (rank >= 4), got rank {len(q)}")
        check_shape(self.name, "result", shape(self.result), _result_shape(q, v, self.heads_last is not None))
        if self.logsumexp is not None:
            check_shape(self.name, "logsumexp", shape(self.logsumexp), _logsumexp_shape(q, self.heads_last is not None))
            if element(self.logsumexp) != logsumexp_element(element(self.query)):
                raise VerifyException(
                    f"{self.name}: logsumexp must have {logsumexp_element(element(self.query))} elements"
                )


@irdl_op_definition
class ScaledDotProductAttentionBackwardOp(IRDLOperation):
    """The gradients of tn.sdpa's query, key and value from its result's gradient, its result and logsumexp.
    `heads_last` gives each gradient with its heads dim (-3) after its rows (-2), the layout torch's CPU flash
    backward writes whatever its operands' layouts.
    %dq, %dk, %dv = tn.sdpa_backward %g, %q, %k, %v, %o, %l scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>"""

    name = "tn.sdpa_backward"
    grad = operand_def(TensorType)
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    out = operand_def(TensorType)
    logsumexp = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    heads_last = opt_prop_def(UnitAttr)
    grad_query = result_def(TensorType)
    grad_key = result_def(TensorType)
    grad_value = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$grad `,` $query `,` $key `,` $value `,` $out `,` $logsumexp (`mask` $mask^)? `scale` `=` $scale "
        "(`causal` $causal^)? (`heads_last` $heads_last^)? attr-dict `:` type($grad) `,` type($query) `,` "
        "type($key) `,` type($value) `,` type($out) `,` type($logsumexp) (`mask` type($mask)^)? "
        "`->` type($grad_query) `,` type($grad_key) `,` type($grad_value)"
    )

    def __init__(
        self,
        grad: SSAValue,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        out: SSAValue,
        logsumexp: SSAValue,
        mask: SSAValue | None,
        scale: float,
        causal: bool = False,
        heads_last: bool = False,
    ):
        operands = [grad, query, key, value, out, logsumexp, [mask] if mask is not None else []]
        types = [TensorType(element(x), _heads_after_rows(shape(x), heads_last)) for x in (query, key, value)]
        props = _flags(scale, causal) | ({"heads_last": UnitAttr()} if heads_last else {})
        super().__init__(operands=operands, result_types=types, properties=props)

    def verify_(self):
        q, k, v = shape(self.query), shape(self.key), shape(self.value)
        _verify_attention(self, q, k, v, self.mask)
        check_shape(self.name, "grad", shape(self.grad), [*q[:-1], v[-1]])
        check_shape(self.name, "out", shape(self.out), [*q[:-1], v[-1]])
        check_shape(self.name, "logsumexp", shape(self.logsumexp), q[:-1])
        heads_last = self.heads_last is not None
        if heads_last and len(q) < 4:
            raise VerifyException(f"{self.name}: heads_last needs a heads dim (rank >= 4), got rank {len(q)}")
        for name, g, x in (
            ("query", self.grad_query, self.query),
            ("key", self.grad_key, self.key),
            ("value", self.grad_value, self.value),
        ):
            check_shape(self.name, f"the {name} gradient", shape(g), _heads_after_rows(shape(x), heads_last))
            if element(g) != element(x):
                raise VerifyException(f"{self.name}: the {name} gradient must have the {name}'s element type")


__all__ = ["ScaledDotProductAttentionOp", "ScaledDotProductAttentionBackwardOp"]
