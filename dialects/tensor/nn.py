"""tn neural-network ops over channel-first (N, C, *spatial) tensors: convolution and 2-d pooling, with their adjoints."""

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
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import DYN, check_shape, element, shape


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def window_out(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """Output size of a sliding window (torch's pooling_output_shape; floor mode is convolution's)."""
    if DYN in (size, k):
        return DYN
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_lengths(name: str, n: int, **arrays: Sequence[int]) -> None:
    for what, values in arrays.items():
        if len(values) != n:
            raise VerifyException(f"{name}: {what} needs {n} entries, got {len(values)}")


# ---- convolution ---------------------------------------------------------------------------------


class ConvParams(IRDLOperation):
    """Properties of an N-d convolution; `transposed` makes it the adjoint (a "deconvolution")."""

    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    dilation = prop_def(DenseArrayBase.constr(i64))
    output_padding = prop_def(DenseArrayBase.constr(i64))
    transposed = opt_prop_def(UnitAttr)
    groups = prop_def(IntegerAttr[i64])

    @staticmethod
    def conv_properties(stride, padding, dilation, transposed, output_padding, groups) -> dict[str, Attribute]:
        props: dict[str, Attribute] = {
            "stride": i64_array(stride),
            "padding": i64_array(padding),
            "dilation": i64_array(dilation),
            "output_padding": i64_array(output_padding),
            "groups": IntegerAttr(groups, i64),
        }
        if transposed:
            props["transposed"] = UnitAttr()
        return props

    def conv_output_shape(self, x: Sequence[int], w: Sequence[int]) -> list[int]:
        """The result shape for input shape x and weight shape w; raises on inconsistent properties or channels."""
        name, n = self.name, len(x) - 2
        stride, padding = self.stride.get_values(), self.padding.get_values()
        dilation, out_pad = self.dilation.get_values(), self.output_padding.get_values()
        groups, transposed = self.groups.value.data, self.transposed is not None
        if n < 1 or len(w) != len(x):
            raise VerifyException(f"{name}: input rank {len(x)} and weight rank {len(w)} must be equal and at least 3")
        _check_lengths(name, n, stride=stride, padding=padding, dilation=dilation, output_padding=out_pad)
        if groups < 1 or min(stride) < 1 or min(dilation) < 1 or min(padding) < 0:
            raise VerifyException(f"{name}: needs groups, stride, dilation >= 1 and padding >= 0")
        in_channels = w[0] if transposed else (DYN if w[1] == DYN else w[1] * groups)
        if DYN not in (x[1], in_channels) and x[1] != in_channels:
            raise VerifyException(f"{name}: input has {x[1]} channels, the weight expects {in_channels}")
        if transposed:
            out_channels = DYN if w[1] == DYN else w[1] * groups
            spatial = [
                DYN if DYN in (i, k) else (i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for i, k, s, p, d, op in zip(x[2:], w[2:], stride, padding, dilation, out_pad)
            ]
        else:
            if w[0] != DYN and w[0] % groups:
                raise VerifyException(f"{name}: {w[0]} output channels do not split into {groups} groups")
            out_channels = w[0]
            spatial = [window_out(i, k, s, p, d, False) for i, k, s, p, d in zip(x[2:], w[2:], stride, padding, dilation)]
        return [x[0], out_channels, *spatial]


@irdl_op_definition
class ConvolutionOp(ConvParams):
    """N-d cross-correlation of (N, C, *spatial) input with (O, C/groups, *kernel) weight, plus an optional bias per output channel;
    `channels_last`: the input is (N, *spatial, C) and the result (N, *spatial, O) (NHWC), the weight stays (O, C/groups, *kernel).
    %r = tn.convolution %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>"""

    name = "tn.convolution"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "`output_padding` `=` $output_padding (`transposed` $transposed^)? `groups` `=` $groups "
        "(`channels_last` $channels_last^)? attr-dict "
        "`:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)"
    )
    channels_last = opt_prop_def(UnitAttr)

    def __init__(self, input, weight, bias, result_type, *, stride, padding, dilation, transposed, output_padding, groups,
                 channels_last: bool = False):  # fmt: skip
        props = self.conv_properties(stride, padding, dilation, transposed, output_padding, groups)
        if channels_last:
            props["channels_last"] = UnitAttr()
        super().__init__(operands=[input, weight, [bias] if bias else []], result_types=[result_type], properties=props)

    def verify_(self):
        x = shape(self.input)
        last = self.channels_last is not None
        if last and self.transposed is not None:
            raise VerifyException(f"{self.name}: channels_last needs a non-transposed convolution")
        expected = self.conv_output_shape([x[0], x[-1], *x[1:-1]] if last else x, shape(self.weight))
        check_shape(self.name, "result", shape(self.result), [expected[0], *expected[2:], expected[1]] if last else expected)
        if self.bias is not None:
            check_shape(self.name, "bias", shape(self.bias), [expected[1]])
        if not element(self.input) == element(self.weight) == element(self.result):
            raise VerifyException(f"{self.name}: input, weight and result must share one element type")


@irdl_op_definition
class ConvolutionBackwardOp(ConvParams):
    """Gradients of tn.convolution w.r.t. input, weight and bias; one result per true entry of `output_mask`, in that order.
    %gx, %gw = tn.convolution_backward %g, %x, %w stride = [1] padding = [0] dilation = [1] output_padding = [0] groups = 1 output_mask = [1, 1, 0] : tensor<2x4x6xf32>, tensor<2x3x8xf32>, tensor<4x3x3xf32> -> tensor<2x3x8xf32>, tensor<4x3x3xf32>"""

    name = "tn.convolution_backward"
    grad_output = operand_def(TensorType)
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    output_mask = prop_def(DenseArrayBase.constr(i64))  # 0/1 flags; i1 arrays do not survive generic print/parse
    grads = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$grad_output `,` $input `,` $weight `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "`output_padding` `=` $output_padding (`transposed` $transposed^)? `groups` `=` $groups "
        "`output_mask` `=` $output_mask attr-dict `:` type($grad_output) `,` type($input) `,` type($weight) `->` type($grads)"
    )

    def __init__(self, grad_output, input, weight, output_mask, *, stride, padding, dilation, transposed, output_padding, groups):
        props = self.conv_properties(stride, padding, dilation, transposed, output_padding, groups)
        props["output_mask"] = i64_array([int(bool(m)) for m in output_mask])
        w = shape(weight)
        out_channels = (DYN if w[1] == DYN else w[1] * groups) if transposed else w[0]
        candidates = [input.type, weight.type, TensorType(element(grad_output), [out_channels])]
        types = [t for t, m in zip(candidates, output_mask) if m]
        super().__init__(operands=[grad_output, input, weight], result_types=[types], properties=props)

    def requested(self) -> list[bool]:
        return [bool(m) for m in self.output_mask.get_values()]

    def verify_(self):
        mask = self.requested()
        if len(mask) != 3 or not set(self.output_mask.get_values()) <= {0, 1}:
            raise VerifyException(f"{self.name}: output_mask needs 3 entries (input, weight, bias), each 0 or 1")
        expected = self.conv_output_shape(shape(self.input), shape(self.weight))
        check_shape(self.name, "grad_output", shape(self.grad_output), expected)
        wanted = [shape(self.input), shape(self.weight), [expected[1]]]
        wanted = [s for s, m in zip(wanted, mask) if m]
        if len(self.grads) != len(wanted):
            raise VerifyException(f"{self.name}: {len(self.grads)} results for {len(wanted)} requested gradients")
        for g, s in zip(self.grads, wanted):
            check_shape(self.name, "gradient", shape(g), s)


# ---- 2-d pooling over the last two dims of (C, H, W) or (N, C, H, W) -------------------------------


class Window2d(IRDLOperation):
    """Properties of a 2-d pooling window over the last two dims; `ceil_mode` rounds the output size up."""

    kernel = prop_def(DenseArrayBase.constr(i64))
    stride = prop_def(DenseArrayBase.constr(i64))
    padding = prop_def(DenseArrayBase.constr(i64))
    ceil_mode = opt_prop_def(UnitAttr)

    def window_dilation(self) -> Sequence[int]:
        return (1, 1)

    def pooled_shape(self, x: Sequence[int]) -> list[int]:
        name = self.name
        k, s, p, d = self.kernel.get_values(), self.stride.get_values(), self.padding.get_values(), self.window_dilation()
        if len(x) not in (3, 4):
            raise VerifyException(f"{name}: input must be (C, H, W) or (N, C, H, W), got rank {len(x)}")
        _check_lengths(name, 2, kernel=k, stride=s, padding=p, dilation=d)
        if min(k) < 1 or min(s) < 1 or min(d) < 1 or any(not 0 <= pi <= ki // 2 for pi, ki in zip(p, k)):
            raise VerifyException(f"{name}: needs kernel, stride, dilation >= 1 and 0 <= padding <= kernel / 2")
        ceil = self.ceil_mode is not None
        return [*x[:-2], *(window_out(x[i - 2], k[i], s[i], p[i], d[i], ceil) for i in range(2))]


def window_properties(kernel, stride, padding, ceil_mode, **extra) -> dict[str, Attribute]:
    props = {"kernel": i64_array(kernel), "stride": i64_array(stride), "padding": i64_array(padding), **({"ceil_mode": UnitAttr()} if ceil_mode else {})}
    return props | {k: i64_array(v) for k, v in extra.items()}


class MaxWindow2d(Window2d):
    """A max-pooling window: a Window2d with dilation."""

    dilation = prop_def(DenseArrayBase.constr(i64))

    def window_dilation(self) -> Sequence[int]:
        return self.dilation.get_values()


@irdl_op_definition
class MaxPool2dOp(MaxWindow2d):
    """2-d max pooling; `indices` holds the flat (h * W + w) position of each maximum within its plane.
    %r, %i = tn.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>"""

    name = "tn.max_pool2d"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation "
        "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result) `,` type($indices)"
    )

    def __init__(self, input, kernel, stride, padding, dilation, ceil_mode, result_type: Attribute):
        props = window_properties(kernel, stride, padding, ceil_mode, dilation=dilation)
        idx = TensorType(i64, result_type.get_shape())
        super().__init__(operands=[input], result_types=[result_type, idx], properties=props)

    def verify_(self):
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
    """2-d average pooling.
    %r = tn.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] count_include_pad : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>"""

    name = "tn.avg_pool2d"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input " + _AVG_PROPS + " `:` type($input) `->` type($result)"

    def __init__(self, input, kernel, stride, padding, ceil_mode, count_include_pad, divisor, result_type):
        props = self.avg_properties(kernel, stride, padding, ceil_mode, count_include_pad, divisor)
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def verify_(self):
        self.verify_divisor()
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
