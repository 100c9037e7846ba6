"""tn 2-d pooling over the last two dims of (C, H, W) or (N, C, H, W) (max and average pooling also channels-last),
with the adjoints: max, average and adaptive average."""

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import check_shape, element, shape
from .nn import check_lengths, i64_array, window_out


class Window2d(IRDLOperation):
    """Properties of a 2-d pooling window over the last two dims; `ceil_mode` rounds the output size up."""

    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    ceil_mode = opt_prop_def(UnitAttr)

    def window_dilation(self) -> Sequence[int]:
        return (1, 1)

    def spatial(self) -> int:
        """Where H stands, counted from the end: -2 in (N, C, H, W), -3 in the channels-last form of the forward
        pools (their `channels_last` property: (N, H, W, C) in and out)."""
        return -3 if getattr(self, "channels_last", None) is not None else -2

    def verify_channels_last(self) -> None:
        if getattr(self, "channels_last", None) is not None and len(shape(self.operands[0])) != 4:
            raise VerifyException(f"{self.name}: channels_last needs an (N, H, W, C) input")

    def pooled_shape(self, x: Sequence[int]) -> list[int]:
        name = self.name
        k, s, p, d = (
            self.kernel.get_values(),
            self.stride.get_values(),
            self.padding.get_values(),
            self.window_dilation(),
        )
        if len(x) not in (3, 4):
            raise VerifyException(f"{name}: input must be (C, H, W) or (N, C, H, W), got rank {len(x)}")
        check_lengths(name, 2, kernel=k, stride=s, padding=p, dilation=d)
        if min(k) < 1 or min(s) < 1 or min(d) < 1 or any(not 0 <= pi <= ki // 2 for pi, ki in zip(p, k)):
            raise VerifyException(f"{name}: needs kernel, stride, dilation >= 1 and 0 <= padding <= kernel / 2")
        ceil, h = self.ceil_mode is not None, len(x) + self.spatial()
        pooled = [window_out(x[h + i], k[i], s[i], p[i], d[i], ceil) for i in range(2)]
        return [*x[:h], *pooled, *x[h + 2 :]]


def window_properties(kernel, stride, padding, ceil_mode, **extra) -> dict[str, Attribute]:
    props = {
        "kernel": i64_array(kernel),
        "stride": i64_array(stride),
        "padding": i64_array(padding),
        **({"ceil_mode": UnitAttr()} if ceil_mode else {}),
    }
    return props | {k: i64_array(v) for k, v in extra.items()}


class MaxWindow2d(Window2d):
    """A max-pooling window: a Window2d with dilation."""

    dilation = prop_def(DenseArrayBase.constr(i64))

    def window_dilation(self) -> Sequence[int]:
        return self.dilation.get_values()


@irdl_op_definition
class MaxPool2dOp(MaxWindow2d):
    """2-d max pooling; `indices` holds the flat (h * W + w) position of each maximum within its plane.
    `channels_last`: the input is (N, H, W, C) and both results (N, OH, OW, C) (NHWC, select-layout's form).
    %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>"""

    name = "tn.max_pool2d"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    indices = result_def(TensorType)
    channels_last = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "(`ceil_mode` $ceil_mode^)? (`channels_last` $channels_last^)? attr-dict `:` type($input) `->` type($result) `,` type($indices)"
    )

    def __init__(
        self, input, kernel, stride, padding, dilation, ceil_mode, result_type: Attribute, channels_last: bool = False
    ):
        props = window_properties(kernel, stride, padding, ceil_mode, dilation=dilation)
        if channels_last:
            props["channels_last"] = UnitAttr()
        idx = TensorType(i64, result_type.get_shape())
        super().__init__(operands=[input], result_types=[result_type, idx], properties=props)

    def verify_(self):
        self.verify_channels_last()
        expected = self.pooled_shape(shape(self.input))
        check_shape(self.name, "result", shape(self.result), expected)
        check_shape(self.name, "indices", shape(self.indices), expected)
        if element(self.indices) != i64 or element(self.result) != element(self.input):
            raise VerifyException(f"{self.name}: result must have the input's element type and indices i64")


@irdl_op_definition
class MaxPool2dBackwardOp(MaxWindow2d):
    """Gradient of tn.max_pool2d: each output gradient is added at the input position its index names.
    %gx = tn.max_pool2d_backward %g, %x, %i kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>, tensor<1x3x4x4xi64>"""

    name = "tn.max_pool2d_backward"
    T: ClassVar = VarConstraint("T", base(TensorType))
    grad_output = operand_def(TensorType)
    input = operand_def(T)
    indices = operand_def(TensorType)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$grad_output `,` $input `,` $indices `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding "
        "`dilation` `=` $dilation (`ceil_mode` $ceil_mode^)? attr-dict `:` type($grad_output) `,` type($input) `,` type($indices)"
    )

    def __init__(self, grad_output, input, indices, kernel, stride, padding, dilation, ceil_mode):
        props = window_properties(kernel, stride, padding, ceil_mode, dilation=dilation)
        super().__init__(operands=[grad_output, input, indices], result_types=[input.type], properties=props)

    def verify_(self):
        expected = self.pooled_shape(shape(self.input))
        check_shape(self.name, "grad_output", shape(self.grad_output), expected)
        check_shape(self.name, "indices", shape(self.indices), expected)
        if element(self.indices) != i64:
            raise VerifyException(f"{self.name}: indices must be i64")


class AvgWindow2d(Window2d):
    """An average-pooling window: padding counts in the divisor with `count_include_pad`; `divisor` overrides it."""

    count_include_pad = opt_prop_def(UnitAttr)
    divisor = opt_prop_def(IntegerAttr[i64])

    @staticmethod
    def avg_properties(kernel, stride, padding, ceil_mode, count_include_pad, divisor) -> dict[str, Attribute]:
        props = window_properties(kernel, stride, padding, ceil_mode)
        if count_include_pad:
            props["count_include_pad"] = UnitAttr()
        if divisor is not None:
            props["divisor"] = IntegerAttr(divisor, i64)
        return props

    def verify_divisor(self) -> None:
        if self.divisor is not None and self.divisor.value.data == 0:
            raise VerifyException(f"{self.name}: divisor must be nonzero")


_AVG_PROPS = (
    "`kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding (`ceil_mode` $ceil_mode^)? "
    "(`count_include_pad` $count_include_pad^)? (`divisor` `=` $divisor^)? attr-dict"
)


@irdl_op_definition
class AvgPool2dOp(AvgWindow2d):
    """2-d average pooling; `channels_last`: the input is (N, H, W, C) and the result (N, OH, OW, C).
    %r = tn.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] count_include_pad : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>"""

    name = "tn.avg_pool2d"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    channels_last = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$input "
        + _AVG_PROPS.replace("attr-dict", "(`channels_last` $channels_last^)? attr-dict")
        + " `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input,
        kernel,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor,
        result_type,
        channels_last: bool = False,
    ):
        props = self.avg_properties(kernel, stride, padding, ceil_mode, count_include_pad, divisor)
        if channels_last:
            props["channels_last"] = UnitAttr()
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def verify_(self):
        self.verify_divisor()
        self.verify_channels_last()
        check_shape(self.name, "result", shape(self.result), self.pooled_shape(shape(self.input)))
        if element(self.result) != element(self.input):
            raise VerifyException(f"{self.name}: result must have the input's element type")


@irdl_op_definition
class AvgPool2dBackwardOp(AvgWindow2d):
    """Gradient of tn.avg_pool2d with the same window.
    %gx = tn.avg_pool2d_backward %g, %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32>"""

    name = "tn.avg_pool2d_backward"
    T: ClassVar = VarConstraint("T", base(TensorType))
    grad_output = operand_def(TensorType)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$grad_output `,` $input " + _AVG_PROPS + " `:` type($grad_output) `,` type($input)"

    def __init__(self, grad_output, input, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
        props = self.avg_properties(kernel, stride, padding, ceil_mode, count_include_pad, divisor)
        super().__init__(operands=[grad_output, input], result_types=[input.type], properties=props)

    def verify_(self):
        self.verify_divisor()
        check_shape(self.name, "grad_output", shape(self.grad_output), self.pooled_shape(shape(self.input)))


@irdl_op_definition
class AdaptiveAvgPool2dOp(IRDLOperation):
    """Average over the windows [floor(i*H/h), ceil((i+1)*H/h)) that tile each plane into `output_size` cells.
    %r = tn.adaptive_avg_pool2d %x output_size = [1, 1] : tensor<2x3x7x7xf32> -> tensor<2x3x1x1xf32>"""

    name = "tn.adaptive_avg_pool2d"
    input = operand_def(TensorType)
    output_size = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `output_size` `=` $output_size attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, output_size: Sequence[int]):
        out = TensorType(element(input), [*shape(input)[:-2], *output_size])
        super().__init__(operands=[input], result_types=[out], properties={"output_size": i64_array(output_size)})

    def verify_(self):
        x, size = shape(self.input), list(self.output_size.get_values())
        if len(x) not in (3, 4) or len(size) != 2 or min(size) < 1:
            raise VerifyException(f"{self.name}: needs a rank 3 or 4 input and two positive output sizes")
        check_shape(self.name, "result", shape(self.result), [*x[:-2], *size])
        if element(self.result) != element(self.input):
            raise VerifyException(f"{self.name}: result must have the input's element type")


@irdl_op_definition
class AdaptiveAvgPool2dBackwardOp(IRDLOperation):
    """Gradient of tn.adaptive_avg_pool2d; the output size is grad_output's last two dims.
    %gx = tn.adaptive_avg_pool2d_backward %g, %x : tensor<2x3x1x1xf32>, tensor<2x3x7x7xf32>"""

    name = "tn.adaptive_avg_pool2d_backward"
    T: ClassVar = VarConstraint("T", base(TensorType))
    grad_output = operand_def(TensorType)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$grad_output `,` $input attr-dict `:` type($grad_output) `,` type($input)"

    def __init__(self, grad_output: SSAValue, input: SSAValue):
        super().__init__(operands=[grad_output, input], result_types=[input.type])

    def verify_(self):
        g, x = shape(self.grad_output), shape(self.input)
        if len(x) not in (3, 4):
            raise VerifyException(f"{self.name}: needs a rank 3 or 4 input")
        check_shape(self.name, "grad_output", g[:-2], x[:-2])
        if len(g) != len(x):
            raise VerifyException(f"{self.name}: grad_output rank {len(g)} differs from input rank {len(x)}")
