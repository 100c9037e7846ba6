"""tn indexing ops: reads through integer index tensors (embedding, index_select, gather, index) and functional
writes (scatter, scatter_reduce, index_put, select_scatter, slice_scatter) that return the updated tensor."""

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, StringAttr, TensorType, UnitAttr, i64
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
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.ir.types import is_int

from .base import DYN, broadcast_shapes, check_dims, check_shape, element, shape, shapes_agree

SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def require_index(name: str, v: SSAValue) -> None:
    if not is_int(element(v)):
        raise VerifyException(f"{name}: index operands need integer elements, got {element(v)}")


def same_element(name: str, *values: SSAValue) -> None:
    if len({element(v) for v in values}) != 1:
        raise VerifyException(f"{name}: data operands and result must share one element type")


def index_result_shape(name: str, x: Sequence[int], dims: Sequence[int], indices: Sequence[Sequence[int]]) -> list[int]:
    """aten.index: the broadcast index shape replaces the indexed dims, in place if they are adjacent, else in front."""
    check_dims(name, dims, len(x))
    if not dims or list(dims) != sorted(set(dims)) or len(dims) != len(indices):
        raise VerifyException(f"{name}: dims must be increasing and name one dim per index operand")
    idx = list(broadcast_shapes(name, *indices))
    rest = [d for i, d in enumerate(x) if i not in dims]
    if list(dims) == list(range(dims[0], dims[-1] + 1)):
        return [*x[: dims[0]], *idx, *x[dims[-1] + 1 :]]
    return [*idx, *rest]


@irdl_op_definition
class EmbeddingOp(IRDLOperation):
    """Rows of a (V, D) table picked by an integer tensor of any shape.   %r = tn.embedding %w[%i] : tensor<100x16xf32>, tensor<2x5xi64> -> tensor<2x5x16xf32>"""

    name = "tn.embedding"
    weight = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$weight `[` $indices `]` attr-dict `:` type($weight) `,` type($indices) `->` type($result)"

    def __init__(self, weight: SSAValue, indices: SSAValue):
        out = TensorType(element(weight), [*shape(indices), *shape(weight)[1:]])
        super().__init__(operands=[weight, indices], result_types=[out])

    def verify_(self):
        require_index(self.name, self.indices)
        if len(shape(self.weight)) != 2:
            raise VerifyException(f"{self.name}: the table must be 2-d")
        same_element(self.name, self.weight, self.result)
        check_shape(self.name, "result", shape(self.result), [*shape(self.indices), shape(self.weight)[1]])


@irdl_op_definition
class EmbeddingBackwardOp(IRDLOperation):
    """Gradient of tn.embedding: rows of grad summed into a zero table at their indices, skipping `padding_idx` (-1: none),
    each divided by its index's count when `scale_grad_by_freq`; a `?` table size comes from `num_weights`.
    %gw = tn.embedding_backward %g, %i padding_idx = -1 : tensor<2x5x16xf32>, tensor<2x5xi64> -> tensor<100x16xf32>"""

    name = "tn.embedding_backward"
    grad = operand_def(TensorType)
    indices = operand_def(TensorType)
    num_weights = opt_operand_def(IndexType)
    padding_idx = prop_def(IntegerAttr[i64])
    scale_grad_by_freq = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$grad `,` $indices (`num_weights` $num_weights^)? `padding_idx` `=` $padding_idx "
        "(`scale_grad_by_freq` $scale_grad_by_freq^)? attr-dict `:` type($grad) `,` type($indices) `->` type($result)"
    )

    def __init__(
        self, grad: SSAValue, indices: SSAValue, num_weights: int | SSAValue, padding_idx: int, scale_grad_by_freq: bool
    ):
        dynamic = isinstance(num_weights, SSAValue)
        out = TensorType(element(grad), [DYN if dynamic else num_weights, shape(grad)[-1]])
        props: dict[str, Attribute] = {"padding_idx": IntegerAttr(padding_idx, i64)}
        if scale_grad_by_freq:
            props["scale_grad_by_freq"] = UnitAttr()
        super().__init__(
            operands=[grad, indices, [num_weights] if dynamic else []], result_types=[out], properties=props
        )

    def verify_(self):
        require_index(self.name, self.indices)
        same_element(self.name, self.grad, self.result)
        out = shape(self.result)
        if len(out) != 2:
            raise VerifyException(f"{self.name}: the result table must be 2-d")
        if (out[0] == DYN) != (self.num_weights is not None):
            raise VerifyException(f"{self.name}: num_weights is given exactly when the table size is `?`")
        check_shape(self.name, "grad", shape(self.grad), [*shape(self.indices), out[1]])


@irdl_op_definition
class IndexSelectOp(IRDLOperation):
    """Slices along `dim` picked by a 1-d index.   %r = tn.index_select %x[%i] dim = 0 : tensor<8x4xf32>, tensor<3xi64> -> tensor<3x4xf32>"""

    name = "tn.index_select"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $index `]` `dim` `=` $dim attr-dict `:` type($input) `,` type($index) `->` type($result)"
    )

    def __init__(self, input: SSAValue, index: SSAValue, dim: int):
        out = list(shape(input))
        if out:
            out[dim] = shape(index)[0] if shape(index) else 1
        super().__init__(
            operands=[input, index],
            result_types=[TensorType(element(input), out)],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    def verify_(self):
        require_index(self.name, self.index)
        same_element(self.name, self.input, self.result)
        x, d = list(shape(self.input)), self.dim.value.data
        if len(shape(self.index)) > 1:
            raise VerifyException(f"{self.name}: index must be 0-d or 1-d")
        check_dims(self.name, [d], max(1, len(x)))
        if x:
            x[d] = shape(self.index)[0] if shape(self.index) else 1
        check_shape(self.name, "result", shape(self.result), x)


class DimIndexed(IRDLOperation):
    """An op addressing one element of `input` per element of `index` (same rank), through `dim`."""

    dim = prop_def(IntegerAttr[i64])

    def verify_dim_index(self, input: SSAValue, index: SSAValue) -> None:
        require_index(self.name, index)
        x, i, d = shape(input), shape(index), self.dim.value.data
        check_dims(self.name, [d], max(1, len(x)))
        if len(i) != len(x):
            raise VerifyException(f"{self.name}: index rank {len(i)} differs from input rank {len(x)}")
        if any(k != d and DYN not in (a, b) and a > b for k, (a, b) in enumerate(zip(i, x))):
            raise VerifyException(f"{self.name}: index shape {list(i)} exceeds input shape {list(x)} off dim {d}")


@irdl_op_definition
class GatherOp(DimIndexed):
    """result[..i..] = input[..i.. with i_dim replaced by index[..i..]].
    %r = tn.gather %x[%i] dim = 1 : tensor<4x8xf32>, tensor<4x2xi64> -> tensor<4x2xf32>"""

    name = "tn.gather"
    input = operand_def(TensorType)
    index = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $index `]` `dim` `=` $dim attr-dict `:` type($input) `,` type($index) `->` type($result)"
    )

    def __init__(self, input: SSAValue, index: SSAValue, dim: int):
        out = TensorType(element(input), shape(index))
        super().__init__(operands=[input, index], result_types=[out], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self):
        self.verify_dim_index(self.input, self.index)
        same_element(self.name, self.input, self.result)
        check_shape(self.name, "result", shape(self.result), shape(self.index))


@irdl_op_definition
class IndexOp(IRDLOperation):
    """Advanced indexing: dims `dims` are indexed by broadcast integer tensors (numpy rules for where the index dims go).
    %r = tn.index %x[%i, %j] dims = [0, 2] : tensor<4x5x6xf32>[tensor<3xi64>, tensor<3xi64>] -> tensor<3x5xf32>"""

    name = "tn.index"
    input = operand_def(TensorType)
    indices = var_operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $indices `]` `dims` `=` $dims attr-dict `:` type($input) `[` type($indices) `]` `->` type($result)"
    )

    def __init__(self, input: SSAValue, indices: Sequence[SSAValue], dims: Sequence[int], result_type: Attribute):
        props = {"dims": DenseArrayBase.from_list(i64, list(dims))}
        super().__init__(operands=[input, list(indices)], result_types=[result_type], properties=props)

    def verify_(self):
        for v in self.indices:
            require_index(self.name, v)
        same_element(self.name, self.input, self.result)
        dims = self.dims.get_values()
        expected = index_result_shape(self.name, shape(self.input), dims, [shape(v) for v in self.indices])
        check_shape(self.name, "result", shape(self.result), expected)


class Scatter(DimIndexed):
    """A copy of `input` with the elements of `src` (at least index-sized) written where `index` points along `dim`."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    index = operand_def(TensorType)
    src = operand_def(TensorType)
    result = result_def(T)
    traits = traits_def(Pure())

    def verify_(self):
        self.verify_dim_index(self.input, self.index)
        same_element(self.name, self.input, self.src)
        i, s = shape(self.index), shape(self.src)
        if len(s) != len(i) or any(DYN not in (a, b) and a > b for a, b in zip(i, s)):
            raise VerifyException(f"{self.name}: src shape {list(s)} is smaller than index shape {list(i)}")
        if self.reduce_kind() not in (None, *SCATTER_REDUCTIONS):
            raise VerifyException(f"{self.name}: reduce must be one of {', '.join(SCATTER_REDUCTIONS)}")

    def reduce_kind(self) -> str | None:
        return None


@irdl_op_definition
class ScatterOp(Scatter):
    """Overwrite (which write wins on duplicate indices is unspecified, as in torch).   %r = tn.scatter %x[%i], %s dim = 1 : tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>"""

    name = "tn.scatter"
    assembly_format = (
        "$input `[` $index `]` `,` $src `dim` `=` $dim attr-dict `:` type($input) `,` type($index) `,` type($src)"
    )

    def __init__(self, input: SSAValue, index: SSAValue, src: SSAValue, dim: int):
        super().__init__(
            operands=[input, index, src], result_types=[input.type], properties={"dim": IntegerAttr(dim, i64)}
        )


@irdl_op_definition
class ScatterReduceOp(Scatter):
    """Combine with `reduce` (sum, prod, mean, amax, amin), starting from input's value if `include_self`, else from the first write.
    %r = tn.scatter_reduce %x[%i], %s dim = 0 reduce = "sum" include_self : tensor<8xf32>, tensor<5xi64>, tensor<5xf32>"""

    name = "tn.scatter_reduce"
    reduce = prop_def(StringAttr)
    include_self = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input `[` $index `]` `,` $src `dim` `=` $dim `reduce` `=` $reduce (`include_self` $include_self^)? attr-dict "
        "`:` type($input) `,` type($index) `,` type($src)"
    )

    def __init__(self, input: SSAValue, index: SSAValue, src: SSAValue, dim: int, reduce: str, include_self: bool):
        props: dict[str, Attribute] = {"dim": IntegerAttr(dim, i64), "reduce": StringAttr(reduce)}
        if include_self:
            props["include_self"] = UnitAttr()
        super().__init__(operands=[input, index, src], result_types=[input.type], properties=props)

    def reduce_kind(self) -> str | None:
        return self.reduce.data


@irdl_op_definition
class IndexPutOp(IRDLOperation):
    """A copy of `input` with `values` (broadcast to the tn.index result shape) written, or added if `accumulate`, at the indexed places.
    %r = tn.index_put %x[%i], %v dims = [0] accumulate : tensor<8x4xf32>[tensor<3xi64>], tensor<3x4xf32>"""

    name = "tn.index_put"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    indices = var_operand_def(TensorType)
    values = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(i64))
    accumulate = opt_prop_def(UnitAttr)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `[` $indices `]` `,` $values `dims` `=` $dims (`accumulate` $accumulate^)? attr-dict "
        "`:` type($input) `[` type($indices) `]` `,` type($values)"
    )

    def __init__(
        self, input: SSAValue, indices: Sequence[SSAValue], values: SSAValue, dims: Sequence[int], accumulate: bool
    ):
        props: dict[str, Attribute] = {"dims": DenseArrayBase.from_list(i64, list(dims))}
        if accumulate:
            props["accumulate"] = UnitAttr()
        super().__init__(operands=[input, list(indices), values], result_types=[input.type], properties=props)

    def verify_(self):
        for v in self.indices:
            require_index(self.name, v)
        same_element(self.name, self.input, self.values)
        target = index_result_shape(
            self.name, shape(self.input), self.dims.get_values(), [shape(v) for v in self.indices]
        )
        got = broadcast_shapes(self.name, target, shape(self.values))
        if not shapes_agree(got, target):
            raise VerifyException(
                f"{self.name}: values of shape {list(shape(self.values))} do not broadcast to {target}"
            )


class EmbedSlice(IRDLOperation):
    """A copy of `input` with `src` written over one region along `dim`; the result has the input's type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    src = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(T)
    traits = traits_def(Pure())

    def region_shape(self) -> list[int]:
        raise NotImplementedError

    def verify_(self):
        check_dims(self.name, [self.dim.value.data], len(shape(self.input)))
        same_element(self.name, self.input, self.src)
        check_shape(self.name, "src", shape(self.src), self.region_shape())


@irdl_op_definition
class SelectScatterOp(EmbedSlice):
    """Write src over the slice at `index` along `dim` (src lacks that dim).   %r = tn.select_scatter %x, %s dim = 0 index = 2 : tensor<4x8xf32>, tensor<8xf32>"""

    name = "tn.select_scatter"
    index = prop_def(IntegerAttr[i64])
    assembly_format = "$input `,` $src `dim` `=` $dim `index` `=` $index attr-dict `:` type($input) `,` type($src)"

    def __init__(self, input: SSAValue, src: SSAValue, dim: int, index: int):
        props = {"dim": IntegerAttr(dim, i64), "index": IntegerAttr(index, i64)}
        super().__init__(operands=[input, src], result_types=[input.type], properties=props)

    def region_shape(self) -> list[int]:
        x, d, i = list(shape(self.input)), self.dim.value.data, self.index.value.data
        if i < 0 or (x[d] != DYN and i >= x[d]):
            raise VerifyException(f"{self.name}: index {i} out of range for size {x[d]}")
        return x[:d] + x[d + 1 :]


@irdl_op_definition
class SliceScatterOp(EmbedSlice):
    """Write src over elements start, start+step, ... (< end) along `dim`, with start and end already clamped to [0, size].
    %r = tn.slice_scatter %x, %s dim = 1 start = 0 end = 8 step = 2 : tensor<4x8xf32>, tensor<4x4xf32>"""

    name = "tn.slice_scatter"
    start = prop_def(IntegerAttr[i64])
    end = prop_def(IntegerAttr[i64])
    step = prop_def(IntegerAttr[i64])
    assembly_format = "$input `,` $src `dim` `=` $dim `start` `=` $start `end` `=` $end `step` `=` $step attr-dict `:` type($input) `,` type($src)"

    def __init__(self, input: SSAValue, src: SSAValue, dim: int, start: int, end: int, step: int):
        props = {k: IntegerAttr(v, i64) for k, v in (("dim", dim), ("start", start), ("end", end), ("step", step))}
        super().__init__(operands=[input, src], result_types=[input.type], properties=props)

    def region_shape(self) -> list[int]:
        x, d = list(shape(self.input)), self.dim.value.data
        start, end, step = self.start.value.data, self.end.value.data, self.step.value.data
        if step < 1 or start < 0 or end < start or (x[d] != DYN and end > x[d]):
            raise VerifyException(f"{self.name}: needs 0 <= start <= end <= size and step >= 1")
        x[d] = (end - start + step - 1) // step
        return x
