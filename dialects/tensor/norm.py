"""tn normalisation ops: layer norm, batch norm (inference and training forms), softmax and log-softmax.

Their backward ops are not tn ops: core aten decompositions turn them into elementwise ops and reductions.
"""

from xdsl.dialects.builtin import Float64Type, FloatAttr, IntegerAttr, TensorType, f64, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import AlongDim, check_shape, element, require_float, shape


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f64)


class Normalization(IRDLOperation):
    """Normalise the input, then scale by an optional `weight` and shift by an optional `bias` (both of the parameter shape).
    Subclasses declare the operands, input, weight and bias first (xDSL orders fields subclass-first)."""

    eps = prop_def(FloatAttr[Float64Type])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def param_shape(self) -> list[int]:
        raise NotImplementedError

    def verify_affine(self) -> None:
        require_float(self.name, element(self.input))
        if element(self.results[0]) != element(self.input) or shape(self.results[0]) != shape(self.input):
            raise VerifyException(f"{self.name}: the normalised result must have the input's type")
        for what, v in (("weight", self.weight), ("bias", self.bias)):
            if v is not None:
                check_shape(self.name, what, shape(v), self.param_shape())


def _operands(*values: SSAValue | None) -> list[list[SSAValue]]:
    return [[v] if v is not None else [] for v in values]


_AFFINE = "(`weight` $weight^)? (`bias` $bias^)?"
_AFFINE_TYPES = "(`weight` type($weight)^)? (`bias` type($bias)^)?"


@irdl_op_definition
class LayerNormOp(Normalization):
    """Normalise over dims `axis`.. (biased variance); also returns the mean and 1/sqrt(var + eps), normalised dims kept as 1.
    %r, %m, %s = tn.layer_norm %x weight %w bias %b axis = 1 eps = 1.0e-05 : tensor<4x8xf32> weight tensor<8xf32> bias tensor<8xf32> -> tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>"""

    name = "tn.layer_norm"
    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    axis = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    mean = result_def(TensorType)
    rstd = result_def(TensorType)
    assembly_format = (
        "$input "
        + _AFFINE
        + " `axis` `=` $axis `eps` `=` $eps attr-dict `:` type($input) "
        + _AFFINE_TYPES
        + " `->` type(results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue | None,
        bias: SSAValue | None,
        axis: int,
        eps: float,
        stats_type: Attribute,
    ):
        props = {"axis": IntegerAttr(axis, i64), "eps": f64_attr(eps)}
        super().__init__(
            operands=_operands(input, weight, bias), result_types=[input.type, stats_type, stats_type], properties=props
        )

    def param_shape(self) -> list[int]:
        return list(shape(self.input)[self.axis.value.data :])

    def verify_(self):
        x, axis = shape(self.input), self.axis.value.data
        if not 0 <= axis < len(x):
            raise VerifyException(f"{self.name}: axis {axis} out of range for rank {len(x)}")
        self.verify_affine()
        stats = [*x[:axis], *[1] * (len(x) - axis)]
        for what, v in (("mean", self.mean), ("rstd", self.rstd)):
            check_shape(self.name, what, shape(v), stats)
            require_float(self.name, element(v))


class BatchNormalization(Normalization):
    """Batch norm over dim 1 (channels) of a rank >= 2 input; parameters and running statistics have shape [C]."""

    input = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    running_mean = operand_def(TensorType)
    running_var = operand_def(TensorType)

    def param_shape(self) -> list[int]:
        return [shape(self.input)[1]]

    def verify_batch_norm(self) -> None:
        if len(shape(self.input)) < 2:
            raise VerifyException(f"{self.name}: input needs rank >= 2 (N, C, ...)")
        self.verify_affine()
        for what, v in (("running_mean", self.running_mean), ("running_var", self.running_var)):
            check_shape(self.name, what, shape(v), self.param_shape())


_BATCH_NORM_OPERANDS = "$input " + _AFFINE + " `stats` $running_mean `,` $running_var"
_BATCH_NORM_TYPES = (
    "`:` type($input) " + _AFFINE_TYPES + " `stats` type($running_mean) `,` type($running_var) `->` type(results)"
)


@irdl_op_definition
class BatchNormInferenceOp(BatchNormalization):
    """Batch norm with the given running statistics: (x - mean) / sqrt(var + eps) * weight + bias per channel.
    %r = tn.batch_norm_inference %x weight %w bias %b stats %m, %v eps = 1.0e-05 : tensor<2x3x4x4xf32> weight tensor<3xf32> bias tensor<3xf32> stats tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>"""

    name = "tn.batch_norm_inference"
    result = result_def(TensorType)
    assembly_format = _BATCH_NORM_OPERANDS + " `eps` `=` $eps attr-dict " + _BATCH_NORM_TYPES

    def __init__(self, input, weight, bias, running_mean, running_var, eps: float):
        operands = _operands(input, weight, bias) + [running_mean, running_var]
        super().__init__(operands=operands, result_types=[input.type], properties={"eps": f64_attr(eps)})

    def verify_(self):
        self.verify_batch_norm()


@irdl_op_definition
class BatchNormTrainingOp(BatchNormalization):
    """Batch norm with the batch's statistics over all dims but 1; also returns the batch mean, 1/sqrt(biased var + eps),
    and the running statistics moved by `momentum` towards the batch mean and unbiased variance.
    %r, %m, %s, %rm, %rv = tn.batch_norm_training %x stats %m0, %v0 momentum = 0.1 eps = 1.0e-05 : tensor<2x3x4x4xf32> stats tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>"""

    name = "tn.batch_norm_training"
    momentum = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    save_mean = result_def(TensorType)
    save_rstd = result_def(TensorType)
    new_running_mean = result_def(TensorType)
    new_running_var = result_def(TensorType)
    assembly_format = _BATCH_NORM_OPERANDS + " `momentum` `=` $momentum `eps` `=` $eps attr-dict " + _BATCH_NORM_TYPES

    def __init__(
        self, input, weight, bias, running_mean, running_var, momentum: float, eps: float, stats_type: Attribute
    ):
        operands = _operands(input, weight, bias) + [running_mean, running_var]
        types = [input.type, stats_type, stats_type, running_mean.type, running_var.type]
        props = {"momentum": f64_attr(momentum), "eps": f64_attr(eps)}
        super().__init__(operands=operands, result_types=types, properties=props)

    def verify_(self):
        self.verify_batch_norm()
        for what, v in (("save_mean", self.save_mean), ("save_rstd", self.save_rstd)):
            check_shape(self.name, what, shape(v), self.param_shape())
        if self.new_running_mean.type != self.running_mean.type or self.new_running_var.type != self.running_var.type:
            raise VerifyException(f"{self.name}: updated running statistics must keep their operands' types")


class SoftmaxLike(AlongDim):
    """A normalised exponential along one dim of a float tensor; the result has the operand's type."""

    def verify_(self):
        super().verify_()
        require_float(self.name, element(self.input))


@irdl_op_definition
class SoftmaxOp(SoftmaxLike):
    """exp(x - max) / sum(exp(x - max)) along dim.   %r = tn.softmax %x dim = 1 : tensor<4x8xf32>"""

    name = "tn.softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxLike):
    """x - max - log(sum(exp(x - max))) along dim.   %r = tn.log_softmax %x dim = 1 : tensor<4x8xf32>"""

    name = "tn.log_softmax"
