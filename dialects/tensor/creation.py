"""tn ops that make tensors from nothing: constants, scalars from index values, iota, random fills."""

from math import prod

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import count_dynamic, element, require_float, shape


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A constant tensor (in practice a 0-d scalar; expand makes it full).   %c = tn.constant dense<2.0> : tensor<f32> -> tensor<f32>"""

    name = "tn.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `->` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def verify_(self):
        if self.value.type != self.result.type:
            raise VerifyException(f"{self.name}: result type must be the value's type")


def splat(v: SSAValue) -> float | None:
    """The value of a float tn.constant that holds one value (0-d, or a splat of any shape), else None."""
    op, n = v.owner, prod(shape(v))
    if not isinstance(op, ConstantOp) or n == 0 or not (n == 1 or op.value.is_splat()):
        return None
    x = next(iter(op.value.iter_values()))
    return float(x) if isinstance(x, float) else None


@irdl_op_definition
class FromIndexOp(IRDLOperation):
    """A 0-d tensor holding an index value (a symbolic size used as data).   %t = tn.from_index %n : tensor<i64>"""

    name = "tn.from_index"
    input = operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute = TensorType(i64, [])):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self):
        if shape(self.result) != ():
            raise VerifyException(f"{self.name}: result must be 0-d")


@irdl_op_definition
class IotaOp(IRDLOperation):
    """0, 1, 2, ... along a 1-d result.   %r = tn.iota [%n] : tensor<?xi64>"""

    name = "tn.iota"
    sizes = var_operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "(`[` $sizes^ `]`)? attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute, sizes=()):
        super().__init__(operands=[list(sizes)], result_types=[result_type])

    def verify_(self):
        if len(shape(self.result)) != 1:
            raise VerifyException(f"{self.name}: result must be 1-d")
        if len(self.sizes) != count_dynamic(self.result.type):
            raise VerifyException(f"{self.name}: one index operand per `?` dim")


class RandomFill(IRDLOperation):
    """A fresh tensor of random floats from torch's global generator; `?` dims sized by the index operands."""

    sizes = var_operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "(`[` $sizes^ `]`)? attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute, sizes=()):
        super().__init__(operands=[list(sizes)], result_types=[result_type])

    def verify_(self):
        if len(self.sizes) != count_dynamic(self.result.type):
            raise VerifyException(f"{self.name}: one index operand per `?` dim")
        require_float(self.name, element(self.result))


@irdl_op_definition
class RandOp(RandomFill):
    """Uniform on [0, 1).   %r = tn.rand : tensor<4x8xf32>"""

    name = "tn.rand"


@irdl_op_definition
class RandnOp(RandomFill):
    """Standard normal.   %r = tn.randn : tensor<4x8xf32>"""

    name = "tn.randn"
