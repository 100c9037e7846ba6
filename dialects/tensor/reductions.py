"""tn reductions and scans. Reductions keep the reduced dims as size 1; the importer squeezes for keepdim=False."""

from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, Float64Type, FloatAttr, IntegerAttr, TensorType, f64, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import AlongDim, check_dims, check_shape, element, shape


class Reduction(IRDLOperation):
    """Reduce over `dims`, keeping rank; the result has size 1 along each reduced dim."""

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return operand_element

    def __init__(self, input: SSAValue, dims: list[int]):
        out = [1 if i in dims else d for i, d in enumerate(shape(input))]
        el = self.result_element(element(input))
        super().__init__(
            operands=[input],
            result_types=[TensorType(el, out)],
            properties={"dims": DenseArrayBase.from_list(i64, sorted(dims))},
        )

    def verify_(self):
        dims = self.dims.get_values()
        check_dims(self.name, dims, len(shape(self.input)))
        expected = [1 if i in dims else d for i, d in enumerate(shape(self.input))]
        check_shape(self.name, "result", shape(self.result), expected)
        want = self.result_element(element(self.input))
        if element(self.result) != want:
            raise VerifyException(f"{self.name}: result element type must be {want}")


@irdl_op_definition
class SumOp(Reduction):
    """Sum over dims.   %r = tn.sum %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>"""

    name = "tn.sum"


@irdl_op_definition
class ProdOp(Reduction):
    """Product over dims.   %r = tn.prod %x dims = [0] : tensor<4x8xf32> -> tensor<1x8xf32>"""

    name = "tn.prod"


@irdl_op_definition
class MeanOp(Reduction):
    """Arithmetic mean over dims (floats).   %r = tn.mean %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>"""

    name = "tn.mean"


@irdl_op_definition
class AmaxOp(Reduction):
    """Maximum over dims, NaN-propagating.   %r = tn.amax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>"""

    name = "tn.amax"


@irdl_op_definition
class AminOp(Reduction):
    """Minimum over dims, NaN-propagating.   %r = tn.amin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>"""

    name = "tn.amin"


@irdl_op_definition
class AnyOp(Reduction):
    """True if any element is nonzero.   %r = tn.any %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>"""

    name = "tn.any"

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return i1


@irdl_op_definition
class AllOp(Reduction):
    """True if every element is nonzero.   %r = tn.all %x dims = [1] : tensor<4x8xi1> -> tensor<4x1xi1>"""

    name = "tn.all"

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return i1


class ArgReduction(Reduction):
    """Index (i64) of the extreme element along exactly one dim; the first one on ties, NaN counts as extreme."""

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return i64

    def verify_(self):
        super().verify_()
        if len(self.dims.get_values()) != 1:
            raise VerifyException(f"{self.name}: reduces exactly one dim")


@irdl_op_definition
class ArgmaxOp(ArgReduction):
    """Index of the maximum along a dim.   %r = tn.argmax %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>"""

    name = "tn.argmax"


@irdl_op_definition
class ArgminOp(ArgReduction):
    """Index of the minimum along a dim.   %r = tn.argmin %x dims = [1] : tensor<4x8xf32> -> tensor<4x1xi64>"""

    name = "tn.argmin"


@irdl_op_definition
class VarOp(IRDLOperation):
    """Variance over dims with `correction` subtracted from the count (1 = unbiased), keeping rank.
    %r = tn.var %x dims = [1] correction = 1.0 : tensor<4x8xf32> -> tensor<4x1xf32>"""

    name = "tn.var"
    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(i64))
    correction = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `dims` `=` $dims `correction` `=` $correction attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, input: SSAValue, dims: list[int], correction: float):
        out = [1 if i in dims else d for i, d in enumerate(shape(input))]
        super().__init__(
            operands=[input],
            result_types=[TensorType(element(input), out)],
            properties={"dims": DenseArrayBase.from_list(i64, sorted(dims)), "correction": FloatAttr(correction, f64)},
        )

    def verify_(self):
        dims = self.dims.get_values()
        check_dims(self.name, dims, len(shape(self.input)))
        expected = [1 if i in dims else d for i, d in enumerate(shape(self.input))]
        check_shape(self.name, "result", shape(self.result), expected)


@irdl_op_definition
class CumsumOp(AlongDim):
    """Inclusive running sum.   %r = tn.cumsum %x dim = 1 : tensor<4x8xf32>"""

    name = "tn.cumsum"


@irdl_op_definition
class CumprodOp(AlongDim):
    """Running product.   %r = tn.cumprod %x dim = 1 : tensor<4x8xf32>"""

    name = "tn.cumprod"


@irdl_op_definition
class LogcumsumexpOp(AlongDim):
    """Running log(sum(exp(x))).   %r = tn.logcumsumexp %x dim = 1 : tensor<4x8xf32>"""

    name = "tn.logcumsumexp"


class IndexedScan(IRDLOperation):
    """Running extreme along one dim, with the index (i64) where it was reached; NaN counts as extreme."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    dim = prop_def(IntegerAttr[i64])
    values = result_def(T)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim attr-dict `:` type($input) `->` type($indices)"

    def __init__(self, input: SSAValue, dim: int):
        indices = TensorType(i64, shape(input))
        super().__init__(
            operands=[input], result_types=[input.type, indices], properties={"dim": IntegerAttr(dim, i64)}
        )

    def verify_(self):
        check_dims(self.name, [self.dim.value.data], len(shape(self.input)))
        if element(self.indices) != i64:
            raise VerifyException(f"{self.name}: indices must have i64 elements")
        check_shape(self.name, "indices", shape(self.indices), shape(self.input))


@irdl_op_definition
class CummaxOp(IndexedScan):
    """Running maximum and its index.   %v, %i = tn.cummax %x dim = 1 : tensor<4x8xf32> -> tensor<4x8xi64>"""

    name = "tn.cummax"


@irdl_op_definition
class CumminOp(IndexedScan):
    """Running minimum and its index.   %v, %i = tn.cummin %x dim = 0 : tensor<4x8xf32> -> tensor<4x8xi64>"""

    name = "tn.cummin"
