"""tn view-family ops. Value semantics: a view op names the elements it selects; it never aliases."""

from typing import ClassVar
from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, TensorType, i64
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
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import DYN, check_dims, check_shape, count_dynamic, element, shape, shapes_agree


def _same_element(op: IRDLOperation, a: SSAValue, b: SSAValue) -> None:
    if element(a) != element(b):
        raise VerifyException(f"{op.name}: result element type must equal the operand's")


def _dynamic_sizes_match(op: IRDLOperation, sizes, result: SSAValue) -> None:
    if len(sizes) != count_dynamic(result.type):
        raise VerifyException(f"{op.name}: {len(sizes)} dynamic sizes given for {count_dynamic(result.type)} `?` dims")


def _numel(s):
    n = 1
    for d in s:
        if d == DYN:
            return None
        n *= d
    return n


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Same elements in row-major order under a new shape; `?` dims take their sizes from the index operands.
    %r = tn.reshape %x [%n] : tensor<?x8xf32> -> tensor<?xf32>"""

    name = "tn.reshape"
    input = operand_def(TensorType)
    sizes = var_operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`[` $sizes^ `]`)? attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, sizes=()):
        super().__init__(operands=[input, list(sizes)], result_types=[result_type])

    def verify_(self):
        _same_element(self, self.input, self.result)
        _dynamic_sizes_match(self, self.sizes, self.result)
        a, b = _numel(shape(self.input)), _numel(shape(self.result))
        if a is not None and b is not None and a != b:
            raise VerifyException(f"{self.name}: {a} elements cannot take shape {list(shape(self.result))}")


@irdl_op_definition
class ExpandOp(IRDLOperation):
    """Broadcast size-1 dims (and new leading dims) to the result shape; `?` dims sized by the index operands.
    %r = tn.expand %x : tensor<1x8xf32> -> tensor<4x8xf32>"""

    name = "tn.expand"
    input = operand_def(TensorType)
    sizes = var_operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input (`[` $sizes^ `]`)? attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, sizes=()):
        super().__init__(operands=[input, list(sizes)], result_types=[result_type])

    def verify_(self):
        _same_element(self, self.input, self.result)
        _dynamic_sizes_match(self, self.sizes, self.result)
        src, dst = shape(self.input), shape(self.result)
        if len(src) > len(dst):
            raise VerifyException(f"{self.name}: cannot expand rank {len(src)} to rank {len(dst)}")
        for s, d in zip(src, dst[len(dst) - len(src) :]):
            if s not in (1, DYN) and d != DYN and s != d:
                raise VerifyException(f"{self.name}: cannot expand {list(src)} to {list(dst)}")


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """Reorder dims: result dim i is operand dim perm[i].   %r = tn.permute %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>"""

    name = "tn.permute"
    input = operand_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, perm: list[int]):
        src = shape(input)
        out = TensorType(element(input), [src[p] for p in perm])
        super().__init__(operands=[input], result_types=[out], properties={"perm": DenseArrayBase.from_list(i64, perm)})

    def verify_(self):
        perm = list(self.perm.get_values())
        src = shape(self.input)
        if sorted(perm) != list(range(len(src))):
            raise VerifyException(f"{self.name}: {perm} is not a permutation of {len(src)} dims")
        _same_element(self, self.input, self.result)
        check_shape(self.name, "result", shape(self.result), [src[p] for p in perm])


@irdl_op_definition
class SqueezeOp(IRDLOperation):
    """Drop the listed dims, each of size 1.   %r = tn.squeeze %x dims = [1] : tensor<4x1xf32> -> tensor<4xf32>"""

    name = "tn.squeeze"
    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dims: list[int]):
        src = shape(input)
        out = TensorType(element(input), [d for i, d in enumerate(src) if i not in dims])
        super().__init__(
            operands=[input], result_types=[out], properties={"dims": DenseArrayBase.from_list(i64, sorted(dims))}
        )

    def verify_(self):
        dims = self.dims.get_values()
        src = shape(self.input)
        check_dims(self.name, dims, len(src))
        if bad := [d for d in dims if src[d] not in (1, DYN)]:
            raise VerifyException(f"{self.name}: dims {bad} do not have size 1")
        _same_element(self, self.input, self.result)
        check_shape(self.name, "result", shape(self.result), [d for i, d in enumerate(src) if i not in dims])


@irdl_op_definition
class UnsqueezeOp(IRDLOperation):
    """Insert a size-1 dim at position `dim` of the result.   %r = tn.unsqueeze %x dim = 0 : tensor<4xf32> -> tensor<1x4xf32>"""

    name = "tn.unsqueeze"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dim: int):
        src = list(shape(input))
        out = TensorType(element(input), src[:dim] + [1] + src[dim:])
        super().__init__(operands=[input], result_types=[out], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self):
        src = list(shape(self.input))
        d = self.dim.value.data
        if not 0 <= d <= len(src):
            raise VerifyException(f"{self.name}: dim {d} out of range for rank {len(src) + 1}")
        _same_element(self, self.input, self.result)
        check_shape(self.name, "result", shape(self.result), src[:d] + [1] + src[d:])


@irdl_op_definition
class SliceOp(IRDLOperation):
    """Elements start, start+step, ... (< end) along `dim`; start and end are already clamped to [0, size].
    %r = tn.slice %x dim = 1 start = 2 end = 8 step = 2 : tensor<4x8xf32> -> tensor<4x3xf32>"""

    name = "tn.slice"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    start = prop_def(IntegerAttr[i64])
    end = prop_def(IntegerAttr[i64])
    step = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim `start` `=` $start `end` `=` $end `step` `=` $step attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dim: int, start: int, end: int, step: int, result_type: Attribute):
        props = {k: IntegerAttr(v, i64) for k, v in (("dim", dim), ("start", start), ("end", end), ("step", step))}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def verify_(self):
        src = shape(self.input)
        d, start, end, step = (a.value.data for a in (self.dim, self.start, self.end, self.step))
        check_dims(self.name, [d], len(src))
        if step < 1 or start < 0 or end < start:
            raise VerifyException(f"{self.name}: needs 0 <= start <= end and step >= 1")
        _same_element(self, self.input, self.result)
        expected = list(src)
        if src[d] != DYN:
            if end > src[d]:
                raise VerifyException(f"{self.name}: end {end} is past size {src[d]}")
            expected[d] = (end - start + step - 1) // step
        check_shape(self.name, "result", shape(self.result), expected)


@irdl_op_definition
class SelectOp(IRDLOperation):
    """The slice at `index` along `dim`, which is dropped.   %r = tn.select %x dim = 0 index = 3 : tensor<4x8xf32> -> tensor<8xf32>"""

    name = "tn.select"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    index = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim `index` `=` $index attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dim: int, index: int):
        src = list(shape(input))
        out = TensorType(element(input), src[:dim] + src[dim + 1 :])
        props = {"dim": IntegerAttr(dim, i64), "index": IntegerAttr(index, i64)}
        super().__init__(operands=[input], result_types=[out], properties=props)

    def verify_(self):
        src = list(shape(self.input))
        d, i = self.dim.value.data, self.index.value.data
        check_dims(self.name, [d], len(src))
        if i < 0 or (src[d] != DYN and i >= src[d]):
            raise VerifyException(f"{self.name}: index {i} out of range for size {src[d]}")
        _same_element(self, self.input, self.result)
        check_shape(self.name, "result", shape(self.result), src[:d] + src[d + 1 :])


@irdl_op_definition
class CatOp(IRDLOperation):
    """Concatenate along `dim`.   %r = tn.cat %a, %b dim = 0 : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<5x8xf32>"""

    name = "tn.cat"
    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs `dim` `=` $dim attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs, dim: int, result_type: Attribute):
        super().__init__(operands=[list(inputs)], result_types=[result_type], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self):
        if not self.inputs:
            raise VerifyException(f"{self.name}: needs at least one operand")
        d = self.dim.value.data
        out = list(shape(self.result))
        check_dims(self.name, [d], len(out))
        total = 0
        for v in self.inputs:
            _same_element(self, v, self.result)
            s = list(shape(v))
            if not shapes_agree(s[:d] + s[d + 1 :], out[:d] + out[d + 1 :]):
                raise VerifyException(f"{self.name}: operand shape {s} does not match {out} off dim {d}")
            total = DYN if DYN in (total, s[d]) else total + s[d]
        if not shapes_agree([total], [out[d]]):
            raise VerifyException(f"{self.name}: sizes along dim {d} add up to {total}, not {out[d]}")


@irdl_op_definition
class FlipOp(IRDLOperation):
    """Reverse the order of elements along dims.   %r = tn.flip %x dims = [0] : tensor<4x8xf32>"""

    name = "tn.flip"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    dims = prop_def(DenseArrayBase.constr(i64))
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `dims` `=` $dims attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, dims: list[int]):
        super().__init__(
            operands=[input], result_types=[input.type], properties={"dims": DenseArrayBase.from_list(i64, dims)}
        )

    def verify_(self):
        check_dims(self.name, self.dims.get_values(), len(shape(self.input)))
        if self.input.type != self.result.type:
            raise VerifyException(f"{self.name}: result type must equal the operand type")


@irdl_op_definition
class AsStridedOp(IRDLOperation):
    """Elements of the row-major operand at offset + sum(i_k * strides[k]) (static only).
    %r = tn.as_strided %x strides = [1, 4] offset = 0 : tensor<16xf32> -> tensor<4x4xf32>"""

    name = "tn.as_strided"
    input = operand_def(TensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    offset = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `strides` `=` $strides `offset` `=` $offset attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, strides: list[int], offset: int):
        props = {"strides": DenseArrayBase.from_list(i64, strides), "offset": IntegerAttr(offset, i64)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def verify_(self):
        src, out = shape(self.input), shape(self.result)
        strides = self.strides.get_values()
        if DYN in src or DYN in out:
            raise VerifyException(f"{self.name}: needs static shapes")
        if len(strides) != len(out):
            raise VerifyException(f"{self.name}: {len(strides)} strides for rank {len(out)}")
        _same_element(self, self.input, self.result)
        numel = _numel(src)
        last = self.offset.value.data + sum((n - 1) * s for n, s in zip(out, strides) if n > 0)
        if _numel(out) and (last >= numel or self.offset.value.data < 0 or min(strides, default=0) < 0):
            raise VerifyException(f"{self.name}: reads past the {numel} elements of the operand")


@irdl_op_definition
class PadOp(IRDLOperation):
    """Pad with a constant: `low`/`high` per dim (negative crops), `value` a 0-d tensor.
    %r = tn.pad %x, %v low = [0, 1] high = [0, 2] : tensor<4x8xf32>, tensor<f32> -> tensor<4x11xf32>"""

    name = "tn.pad"
    input = operand_def(TensorType)
    value = operand_def(TensorType)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $value `low` `=` $low `high` `=` $high attr-dict `:` type($input) `,` type($value) `->` type($result)"

    def __init__(self, input: SSAValue, value: SSAValue, low: list[int], high: list[int]):
        out = [d if d == DYN else d + lo + hi for d, lo, hi in zip(shape(input), low, high)]
        props = {"low": DenseArrayBase.from_list(i64, low), "high": DenseArrayBase.from_list(i64, high)}
        super().__init__(operands=[input, value], result_types=[TensorType(element(input), out)], properties=props)

    def verify_(self):
        src = shape(self.input)
        low, high = self.low.get_values(), self.high.get_values()
        if not len(low) == len(high) == len(src):
            raise VerifyException(f"{self.name}: low and high need one entry per dim")
        if shape(self.value) != ():
            raise VerifyException(f"{self.name}: the padding value must be a 0-d tensor")
        _same_element(self, self.input, self.result)
        _same_element(self, self.value, self.result)
        expected = [d if d == DYN else d + lo + hi for d, lo, hi in zip(src, low, high)]
        check_shape(self.name, "result", shape(self.result), expected)


@irdl_op_definition
class DimOp(IRDLOperation):
    """The size of one dim as an index.   %n = tn.dim %x dim = 0 : tensor<?x8xf32>"""

    name = "tn.dim"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, dim: int):
        super().__init__(operands=[input], result_types=[IndexType()], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self):
        check_dims(self.name, [self.dim.value.data], len(shape(self.input)))
