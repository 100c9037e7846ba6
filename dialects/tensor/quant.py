"""tn affine quantization: quantize / dequantize (PT2E's quantized_decomposed ops, per tensor or per channel) and the
int8 products oneDNN runs whole (fuse-quant makes them from dq -> convolution / linear -> q).

Scales and zero points are operands: a 0-d tensor per tensor (the importer keeps a Python float scale as f64, the
double eager reads), a 1-d one per channel along `axis`. Their meaning is torch's (dialects/semantics/quant.py);
expand-quant writes q/dq as the elementwise tn ops eager's decomposition runs, in its order and dtypes.
"""

from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, TensorType, UnitAttr, f64, i8, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.ir.types import is_float, is_int

from .base import check_shape, element, shape
from .nn import ConvParams


class QParams(IRDLOperation):
    """An affine (de)quantization: `quant_min`/`quant_max` the integer range, `axis` set for per-channel parameters."""

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = opt_operand_def(TensorType)
    quant_min = prop_def(IntegerAttr[i64])
    quant_max = prop_def(IntegerAttr[i64])
    axis = opt_prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `scale` $scale (`zero_point` $zero_point^)? `range` `=` `[` $quant_min `,` $quant_max `]` "
        "(`axis` $axis^)? attr-dict `:` type($input) `,` type($scale) (`,` type($zero_point)^)? `->` type($result)"
    )

    def __init__(self, input, scale, zero_point, quant_min: int, quant_max: int, axis: int | None, element_type):
        props = {"quant_min": IntegerAttr(quant_min, i64), "quant_max": IntegerAttr(quant_max, i64)}
        if axis is not None:
            props["axis"] = IntegerAttr(axis, i64)
        zp = [zero_point] if zero_point is not None else []
        super().__init__(
            operands=[input, scale, zp], result_types=[TensorType(element_type, shape(input))], properties=props
        )

    @property
    def axis_value(self) -> int | None:
        return None if self.axis is None else self.axis.value.data

    @property
    def bounds(self) -> tuple[int, int]:
        return self.quant_min.value.data, self.quant_max.value.data

    def verify_(self):
        check_shape(self.name, "result", shape(self.result), shape(self.input))
        if not is_float(element(self.scale)):
            raise VerifyException(f"{self.name}: scale must be float")
        n = len(shape(self.input))
        if self.axis is None:
            if any(len(shape(v)) != 0 for v in (self.scale, self.zero_point) if v is not None):
                raise VerifyException(f"{self.name}: per-tensor parameters are 0-d")
            if self.zero_point is None:
                raise VerifyException(f"{self.name}: per-tensor needs a zero point")
        elif not 0 <= self.axis_value < n or len(shape(self.scale)) != 1:
            raise VerifyException(f"{self.name}: axis {self.axis_value} of rank {n}, 1-d scales")


@irdl_op_definition
class QuantizeOp(QParams):
    """clamp(round(x / scale) + zero_point, quant_min, quant_max) as an integer type.
    %q = tn.quantize %x scale %s zero_point %z range = [0, 255] : tensor<8xf32>, tensor<f64>, tensor<i64> -> tensor<8xui8>"""

    name = "tn.quantize"

    def verify_(self):
        super().verify_()
        if not is_float(element(self.input)) or not is_int(element(self.result)):
            raise VerifyException(f"{self.name}: float input, integer result")


@irdl_op_definition
class DequantizeOp(QParams):
    """(q - zero_point) * scale as a float type.
    %x = tn.dequantize %q scale %s zero_point %z range = [0, 255] : tensor<8xui8>, tensor<f64>, tensor<i64> -> tensor<8xf32>"""

    name = "tn.dequantize"

    def verify_(self):
        super().verify_()
        if not is_int(element(self.input)) or not is_float(element(self.result)):
            raise VerifyException(f"{self.name}: integer input, float result")


class QProduct(IRDLOperation):
    """oneDNN's int8 product: u8/i8 activations (`x_scale`, `x_zero_point`), i8 weights with per-output-channel
    scales and zero points, an optional float bias, a `post_op` ("none", "relu", "gelu", "gelu_tanh": torch's gelu,
    exact or tanh-approximated), then the result quantized by
    (`out_scale`, `out_zero_point`) when its type is an integer, else float."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    w_scale = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    x_scale = prop_def(FloatAttr)
    x_zero_point = prop_def(IntegerAttr[i64])
    out_scale = prop_def(FloatAttr)
    out_zero_point = prop_def(IntegerAttr[i64])
    post_op = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    POST_OPS: ClassVar[tuple[str, ...]] = ("none", "relu", "gelu", "gelu_tanh")

    @staticmethod
    def qproperties(x_scale, x_zp, out_scale, out_zp, post_op) -> dict[str, Attribute]:
        return {
            "x_scale": FloatAttr(float(x_scale), f64),
            "x_zero_point": IntegerAttr(int(x_zp), i64),
            "out_scale": FloatAttr(float(out_scale), f64),
            "out_zero_point": IntegerAttr(int(out_zp), i64),
            "post_op": StringAttr(post_op),
        }

    def qcheck(self, channels: int):
        if self.post_op.data not in self.POST_OPS:
            raise VerifyException(f"{self.name}: post_op {self.post_op.data!r} is none of {self.POST_OPS}")
        if not is_int(element(self.input)) or not is_int(element(self.weight)):
            raise VerifyException(f"{self.name}: integer input and weight")
        for what, v in (("w_scale", self.w_scale), ("w_zero_point", self.w_zero_point), ("bias", self.bias)):
            if v is not None:
                check_shape(self.name, what, shape(v), [channels])


@irdl_op_definition
class QConvOp(QProduct, ConvParams):
    """A 2-d int8 convolution of NCHW activations and OIHW weights (oneDNN's qconv_pointwise); `channels_last`: the
    input is (N, H, W, C) and the result (N, H, W, O), the layout oneDNN computes in. With `accum` (a uint8 tensor of
    the result's shape and its `accum_scale`, `accum_zero_point`), oneDNN's sum post-op: the dequantized accum is
    added to the product before `post_op` (a residual connection).
    %y = tn.qconv %x, %w, %ws, %wz, %b x = (0.5 : f64, 128) out = (0.1 : f64, 0) post_op = "relu" stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32> -> tensor<2x4x8x8xui8>"""

    name = "tn.qconv"
    channels_last = opt_prop_def(UnitAttr)
    accum = opt_operand_def(TensorType)  # xDSL puts a subclass's operands first
    accum_scale = opt_prop_def(FloatAttr)
    accum_zero_point = opt_prop_def(IntegerAttr[i64])
    accum_donated = opt_prop_def(UnitAttr)  # nothing reads the accum after this op: oneDNN may sum into it in place
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$input `,` $weight `,` $w_scale `,` $w_zero_point (`,` $bias^)? (`accum` $accum^ `scale` $accum_scale `zero_point` "
        "$accum_zero_point)? `x` `=` `(` $x_scale `,` $x_zero_point `)` "
        "`out` `=` `(` $out_scale `,` $out_zero_point `)` `post_op` `=` $post_op `stride` `=` $stride "
        "`padding` `=` $padding `dilation` `=` $dilation `output_padding` `=` $output_padding `groups` `=` $groups (`transposed` $transposed^)? (`channels_last` $channels_last^)? "
        "(`accum_donated` $accum_donated^)? "
        "attr-dict `:` type($input) `,` type($weight) `,` type($w_scale) `,` type($w_zero_point) (`,` type($bias)^)? "
        "(`accum` type($accum)^)? `->` type($result)"
    )

    def __init__(
        self,
        x,
        w,
        w_scale,
        w_zp,
        bias,
        result_type,
        *,
        x_q,
        out_q,
        post_op,
        stride,
        padding,
        dilation,
        groups,
        channels_last: bool = False,
        accum=None,
    ):
        props = self.conv_properties(stride, padding, dilation, False, [0] * len(stride), groups)
        props.update(self.qproperties(*x_q, *out_q, post_op))
        if channels_last:
            props["channels_last"] = UnitAttr()
        if accum is not None:  # (value, scale, zero point)
            props.update(accum_scale=FloatAttr(float(accum[1]), f64), accum_zero_point=IntegerAttr(int(accum[2]), i64))
        super().__init__(
            operands=[[accum[0]] if accum is not None else [], x, w, w_scale, w_zp, [bias] if bias is not None else []],
            result_types=[result_type],
            properties=props,
        )

    def verify_(self):
        if len(shape(self.input)) != 4 or self.transposed is not None:
            raise VerifyException(f"{self.name}: a 2-d, non-transposed convolution")
        x, last = shape(self.input), self.channels_last is not None
        expected = self.conv_output_shape([x[0], x[3], x[1], x[2]] if last else x, shape(self.weight))
        check_shape(self.name, "result", shape(self.result), [expected[i] for i in (0, 2, 3, 1)] if last else expected)
        self.qcheck(shape(self.weight)[0])
        if (self.accum is None) != (self.accum_scale is None) or (self.accum is None) != (
            self.accum_zero_point is None
        ):
            raise VerifyException(f"{self.name}: accum needs its scale and zero point, and they it")
        if self.accum is not None:
            check_shape(self.name, "accum", shape(self.accum), shape(self.result))


@irdl_op_definition
class QLinearOp(QProduct):
    """An int8 linear layer x @ w.T (+ bias) of (M, K) activations and (N, K) weights (oneDNN's qlinear_pointwise).
    %y = tn.qlinear %x, %w, %ws, %wz, %b x = (0.5 : f64, 128) out = (0.1 : f64, -3) post_op = "none" : tensor<4x16xui8>, tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64>, tensor<8xf32> -> tensor<4x8xi8>"""

    name = "tn.qlinear"
    assembly_format = (
        "$input `,` $weight `,` $w_scale `,` $w_zero_point (`,` $bias^)? `x` `=` `(` $x_scale `,` $x_zero_point `)` "
        "`out` `=` `(` $out_scale `,` $out_zero_point `)` `post_op` `=` $post_op "
        "attr-dict `:` type($input) `,` type($weight) `,` type($w_scale) `,` type($w_zero_point) (`,` type($bias)^)? "
        "`->` type($result)"
    )

    def __init__(self, x, w, w_scale, w_zp, bias, result_type: Attribute, *, x_q, out_q, post_op):
        super().__init__(
            operands=[x, w, w_scale, w_zp, [bias] if bias is not None else []],
            result_types=[result_type],
            properties=self.qproperties(*x_q, *out_q, post_op),
        )

    def verify_(self):
        if len(shape(self.input)) != 2 or len(shape(self.weight)) != 2:
            raise VerifyException(f"{self.name}: 2-d input and weight")
        (m, k), (n, k2) = shape(self.input), shape(self.weight)
        check_shape(self.name, "weight", [k2], [k])
        check_shape(self.name, "result", shape(self.result), [m, n])
        self.qcheck(n)


@irdl_op_definition
class ChooseQParamsOp(IRDLOperation):
    """The scale (f64) and zero point (i64) of an affine quantization of x into [quant_min, quant_max] from its
    minimum and maximum (PT2E's dynamic quantization: quantized_decomposed.choose_qparams.tensor, at run time).
    %s, %z = tn.choose_qparams %x range = [0, 255] eps = 2.44e-04 dtype = "uint8" : tensor<4x8xf32> -> tensor<1xf64>, tensor<1xi64>"""

    name = "tn.choose_qparams"
    input = operand_def(TensorType)
    quant_min = prop_def(IntegerAttr[i64])
    quant_max = prop_def(IntegerAttr[i64])
    eps = prop_def(FloatAttr)
    dtype = prop_def(StringAttr)
    scale = result_def(TensorType)
    zero_point = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `range` `=` `[` $quant_min `,` $quant_max `]` `eps` `=` $eps `dtype` `=` $dtype attr-dict `:` "
        "type($input) `->` type($scale) `,` type($zero_point)"
    )

    def __init__(self, input, quant_min: int, quant_max: int, eps: float, dtype: str):
        props = {
            "quant_min": IntegerAttr(quant_min, i64),
            "quant_max": IntegerAttr(quant_max, i64),
            "eps": FloatAttr(float(eps), f64),
            "dtype": StringAttr(dtype),
        }
        types = [TensorType(f64, [1]), TensorType(i64, [1])]
        super().__init__(operands=[input], result_types=types, properties=props)

    def verify_(self):
        if not is_float(element(self.input)):
            raise VerifyException(f"{self.name}: float input")
        if (element(self.scale), shape(self.scale), element(self.zero_point)) != (f64, (1,), i64):
            raise VerifyException(f"{self.name}: results tensor<1xf64>, tensor<1xi64>")


@irdl_op_definition
class QLinearDynamicOp(IRDLOperation):
    """An int8 linear layer whose activations' scale and zero point are tensors computed at run time (dynamic
    quantization: oneDNN's qlinear_pointwise.tensor); a float32 result, `post_op` after the bias.
    %y = tn.qlinear_dynamic %x scale %s zero_point %z, %w, %ws, %wz, %b post_op = "none" : tensor<4x16xui8>, tensor<1xf64>, tensor<1xi64>, tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64>, tensor<8xf32> -> tensor<4x8xf32>"""

    name = "tn.qlinear_dynamic"
    input = operand_def(TensorType)
    act_scale = operand_def(TensorType)
    act_zero_point = operand_def(TensorType)
    weight = operand_def(TensorType)
    w_scale = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    post_op = prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `scale` $act_scale `zero_point` $act_zero_point `,` $weight `,` $w_scale `,` $w_zero_point "
        "(`,` $bias^)? `post_op` `=` $post_op attr-dict `:` type($input) `,` type($act_scale) `,` "
        "type($act_zero_point) `,` type($weight) `,` type($w_scale) `,` type($w_zero_point) (`,` type($bias)^)? "
        "`->` type($result)"
    )

    def __init__(self, x, act_scale, act_zp, w, w_scale, w_zp, bias, result_type: Attribute, post_op: str = "none"):
        super().__init__(
            operands=[x, act_scale, act_zp, w, w_scale, w_zp, [bias] if bias is not None else []],
            result_types=[result_type],
            properties={"post_op": StringAttr(post_op)},
        )

    def verify_(self):
        if len(shape(self.input)) != 2 or len(shape(self.weight)) != 2 or not is_float(element(self.result)):
            raise VerifyException(f"{self.name}: 2-d input and weight, a float result")
        (m, k), (n, k2) = shape(self.input), shape(self.weight)
        check_shape(self.name, "weight", [k2], [k])
        check_shape(self.name, "result", shape(self.result), [m, n])
        if self.post_op.data not in QProduct.POST_OPS:
            raise VerifyException(f"{self.name}: post_op {self.post_op.data!r} is none of {QProduct.POST_OPS}")


@irdl_op_definition
class WeightInt8MmOp(IRDLOperation):
    """A weight-only int8 product: (M, K) float activations times the transpose of an (N, K) int8 weight, each
    output column times its weight row's scale; the weight stays int8 in memory (torchao's Int8WeightOnlyConfig
    after AOT autograd: mm(x, convert(permute(w))) * scale, which fuse-quant makes this op of).
    %y = tn.weight_int8_mm %x, %w, %s : tensor<4x16xf32>, tensor<8x16xi8>, tensor<8xf32> -> tensor<4x8xf32>"""

    name = "tn.weight_int8_mm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    scale = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `,` $scale attr-dict `:` type($input) `,` type($weight) `,` type($scale) `->` type($result)"
    )

    def __init__(self, x, w, scale, result_type: Attribute):
        super().__init__(operands=[x, w, scale], result_types=[result_type])

    def verify_(self):
        if len(shape(self.input)) != 2 or len(shape(self.weight)) != 2:
            raise VerifyException(f"{self.name}: 2-d input and weight")
        if element(self.weight) != i8 or not is_float(element(self.input)):
            raise VerifyException(f"{self.name}: float input, int8 weight")
        if not element(self.input) == element(self.scale) == element(self.result):
            raise VerifyException(f"{self.name}: input, scale and result of one float type")
        (m, k), (n, k2) = shape(self.input), shape(self.weight)
        check_shape(self.name, "weight", [k2], [k])
        check_shape(self.name, "scale", shape(self.scale), [n])
        check_shape(self.name, "result", shape(self.result), [m, n])


@irdl_op_definition
class WeightInt4MmOp(IRDLOperation):
    """A weight-only int4 product in torch's CPU (tinygemm) layout: (M, K) float activations times an (N, K) int4
    weight packed two to a byte, (N, K / 2) uint8, with a scale and zero point per `group_size` columns of each row,
    (K / group_size, N, 2) (torchao's prototype Int4OpaqueTensor: aten._weight_int4pack_mm_for_cpu).
    %y = tn.weight_int4_mm %x, %w, %sz group_size = 32 : tensor<4x64xf32>, tensor<16x32xui8>, tensor<2x16x2xf32> -> tensor<4x16xf32>"""

    name = "tn.weight_int4_mm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    scale_and_zero = operand_def(TensorType)
    group_size = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `,` $scale_and_zero `group_size` `=` $group_size attr-dict `:` type($input) `,` "
        "type($weight) `,` type($scale_and_zero) `->` type($result)"
    )

    def __init__(self, x, w, scale_and_zero, group_size: int, result_type: Attribute):
        props = {"group_size": IntegerAttr(group_size, i64)}
        super().__init__(operands=[x, w, scale_and_zero], result_types=[result_type], properties=props)

    def verify_(self):
        if len(shape(self.input)) != 2 or len(shape(self.weight)) != 2 or len(shape(self.scale_and_zero)) != 3:
            raise VerifyException(f"{self.name}: 2-d input and weight, 3-d scales and zero points")
        if not is_float(element(self.input)) or not element(self.input) == element(self.scale_and_zero):
            raise VerifyException(f"{self.name}: float input, scales and zero points of its type")
        if not is_int(element(self.weight)) or element(self.weight).width.data != 8:
            raise VerifyException(f"{self.name}: a weight of packed bytes")
        (m, k), (n, half), g = shape(self.input), shape(self.weight), self.group_size.value.data
        if g <= 0 or (k >= 0 and (k % g or (half >= 0 and 2 * half != k))):
            raise VerifyException(f"{self.name}: K = {k} in groups of {g}, packed in {half} bytes per row")
        check_shape(self.name, "scale_and_zero", shape(self.scale_and_zero), [k // g if k >= 0 else -1, n, 2])
        check_shape(self.name, "result", shape(self.result), [m, n])


__all__ = [
    "ChooseQParamsOp",
    "DequantizeOp",
    "QConvOp",
    "QLinearDynamicOp",
    "QLinearOp",
    "QuantizeOp",
    "WeightInt4MmOp",
    "WeightInt8MmOp",
]
