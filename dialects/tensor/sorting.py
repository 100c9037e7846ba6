"""tn ops that order the elements along one dim: sort, top-k, k-th value, median, mode. Each gives values and their
i64 indices along `dim`; the order among equal values is torch's (these ops run as torch's kernels: a generated
sort is a pass over memory per network step or n^2 work, frontend/searching.py). Picks of one element keep the dim as size 1,
as reductions do; the importer squeezes for keepdim=False."""

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.ir.types import DYN

from .base import check_dims, check_shape, element, shape


class Ordered(IRDLOperation):
    """Values of input's element type and i64 indices, of input's shape but `size_along_dim(self)` along `dim`."""

    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())

    def size_along_dim(self, n: int) -> int:
        return n

    def _result_shape(self, input_shape) -> list[int]:
        d = self.dim.value.data
        return [self.size_along_dim(n) if i == d else n for i, n in enumerate(input_shape)]

    def _build(self, input: SSAValue, dim: int, size: int, properties: dict):
        out = [size if i == dim else n for i, n in enumerate(shape(input))]
        super().__init__(
            operands=[input],
            result_types=[TensorType(element(input), out), TensorType(i64, out)],
            properties={"dim": IntegerAttr(dim, i64), **properties},
        )

    def verify_(self):
        check_dims(self.name, [self.dim.value.data], len(shape(self.input)))
        want = self._result_shape(shape(self.input))
        check_shape(self.name, "values", shape(self.values), want)
        check_shape(self.name, "indices", shape(self.indices), want)
        if element(self.values) != element(self.input):
            raise VerifyException(f"{self.name}: values must have the input's element type")
        if element(self.indices) != i64:
            raise VerifyException(f"{self.name}: indices must have i64 elements")


@irdl_op_definition
class SortOp(Ordered):
    """Sorted along dim (NaN last, first with `descending`); `stable` keeps equal values in input order.
    %v, %i = tn.sort %x dim = 1 descending : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xi64>"""

    name = "tn.sort"
    descending = opt_prop_def(UnitAttr)
    stable = opt_prop_def(UnitAttr)
    assembly_format = "$input `dim` `=` $dim (`descending` $descending^)? (`stable` $stable^)? attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def __init__(self, input: SSAValue, dim: int, descending: bool, stable: bool):
        flags = {**({"descending": UnitAttr()} if descending else {}), **({"stable": UnitAttr()} if stable else {})}
        self._build(input, dim, shape(input)[dim], flags)


@irdl_op_definition
class TopkOp(Ordered):
    """The k largest (smallest without `largest`) along dim, in order when `sorted`.
    %v, %i = tn.topk %x k = 3 dim = 1 largest sorted : tensor<4x8xf32> -> tensor<4x3xf32>, tensor<4x3xi64>"""

    name = "tn.topk"
    k = prop_def(IntegerAttr[i64])
    largest = opt_prop_def(UnitAttr)
    sorted = opt_prop_def(UnitAttr)
    assembly_format = "$input `k` `=` $k `dim` `=` $dim (`largest` $largest^)? (`sorted` $sorted^)? attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def size_along_dim(self, n: int) -> int:
        return self.k.value.data

    def __init__(self, input: SSAValue, k: int, dim: int, largest: bool, sorted: bool):
        props = {
            "k": IntegerAttr(k, i64),
            **({"largest": UnitAttr()} if largest else {}),
            **({"sorted": UnitAttr()} if sorted else {}),
        }
        self._build(input, dim, k, props)

    def verify_(self):
        n = shape(self.input)[self.dim.value.data] if 0 <= self.dim.value.data < len(shape(self.input)) else DYN
        if self.k.value.data < 0 or (n != DYN and self.k.value.data > n):
            raise VerifyException(f"{self.name}: k must lie in [0, {n}]")
        super().verify_()


class Pick(Ordered):
    """One element along dim: the dim keeps size 1."""

    def size_along_dim(self, n: int) -> int:
        return 1


@irdl_op_definition
class KthvalueOp(Pick):
    """The k-th smallest along dim (k from 1).   %v, %i = tn.kthvalue %x k = 2 dim = 1 : tensor<4x8xf32> -> tensor<4x1xf32>, tensor<4x1xi64>"""

    name = "tn.kthvalue"
    k = prop_def(IntegerAttr[i64])
    assembly_format = (
        "$input `k` `=` $k `dim` `=` $dim attr-dict `:` type($input) `->` type($values) `,` type($indices)"
    )

    def __init__(self, input: SSAValue, k: int, dim: int):
        self._build(input, dim, 1, {"k": IntegerAttr(k, i64)})

    def verify_(self):
        n = shape(self.input)[self.dim.value.data] if 0 <= self.dim.value.data < len(shape(self.input)) else DYN
        if self.k.value.data < 1 or (n != DYN and self.k.value.data > n):
            raise VerifyException(f"{self.name}: k must lie in [1, {n}]")
        super().verify_()


@irdl_op_definition
class MedianOp(Pick):
    """The lower median along dim: NaN where the dim holds one, or with `ignore_nan` the median of the numbers.
    %v, %i = tn.median %x dim = 1 ignore_nan : tensor<4x8xf32> -> tensor<4x1xf32>, tensor<4x1xi64>"""

    name = "tn.median"
    ignore_nan = opt_prop_def(UnitAttr)
    assembly_format = "$input `dim` `=` $dim (`ignore_nan` $ignore_nan^)? attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def __init__(self, input: SSAValue, dim: int, ignore_nan: bool):
        self._build(input, dim, 1, {"ignore_nan": UnitAttr()} if ignore_nan else {})


@irdl_op_definition
class ModeOp(Pick):
    """The most frequent value along dim (the smallest of equally frequent ones).
    %v, %i = tn.mode %x dim = 0 : tensor<4x8xf32> -> tensor<1x8xf32>, tensor<1x8xi64>"""

    name = "tn.mode"
    assembly_format = "$input `dim` `=` $dim attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    def __init__(self, input: SSAValue, dim: int):
        self._build(input, dim, 1, {})


__all__ = ["SortOp", "TopkOp", "KthvalueOp", "MedianOp", "ModeOp"]
