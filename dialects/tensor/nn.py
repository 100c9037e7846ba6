"""tn convolution over channel-first (N, C, *spatial) tensors (or channels-last), with its adjoint; the window
helpers pooling.py shares."""

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
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


def check_lengths(name: str, n: int, **arrays: Sequence[int]) -> None:
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
        check_lengths(name, n, stride=stride, padding=padding, dilation=dilation, output_padding=out_pad)
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
            spatial = [
                window_out(i, k, s, p, d, False) for i, k, s, p, d in zip(x[2:], w[2:], stride, padding, dilation)
            ]
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

    def __init__(
        self,
        input,
        weight,
        bias,
        result_type,
        *,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        channels_last: bool = False,
    ):
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
        check_shape(
            self.name, "result", shape(self.result), [expected[0], *expected[2:], expected[1]] if last else expected
        )
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

    def __init__(
        self, grad_output, input, weight, output_mask, *, stride, padding, dilation, transposed, output_padding, groups
    ):
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
