"""Shared shapes of tn ops: abstract bases that concrete ops name and document, plus type helpers for verifiers."""

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.ir.types import is_float

DYN = DYNAMIC_INDEX


def broadcast_shapes(name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy broadcasting of static shapes where `?` matches anything; raises on a static conflict."""
    out_rank = max(len(s) for s in shapes)
    out: list[int] = []
    for i in range(out_rank):
        dims = [s[len(s) - out_rank + i] for s in shapes if len(s) - out_rank + i >= 0]
        static = {d for d in dims if d not in (1, DYN)}
        if len(static) > 1:
            raise VerifyException(f"{name}: shapes {[list(s) for s in shapes]} do not broadcast")
        if static:
            out.append(static.pop())
        elif DYN in dims:
            out.append(DYN)
        else:
            out.append(1)
    return tuple(out)


def shapes_agree(a: Sequence[int], b: Sequence[int]) -> bool:
    """Same rank and every pair of dims equal or one of them `?`."""
    return len(a) == len(b) and all(x == y or DYN in (x, y) for x, y in zip(a, b))


def check_shape(name: str, what: str, got: Sequence[int], expected: Sequence[int]) -> None:
    if not shapes_agree(got, expected):
        raise VerifyException(f"{name}: {what} shape {list(got)} does not match expected {list(expected)}")


def check_dims(name: str, dims: Sequence[int], rank: int) -> None:
    if bad := [d for d in dims if not 0 <= d < rank]:
        raise VerifyException(f"{name}: dims {bad} out of range for rank {rank}")


def element(v: SSAValue | Attribute) -> Attribute:
    t = v.type if isinstance(v, SSAValue) else v
    assert isinstance(t, TensorType)
    return t.get_element_type()


def shape(v: SSAValue | Attribute) -> tuple[int, ...]:
    t = v.type if isinstance(v, SSAValue) else v
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def require_float(name: str, el: Attribute) -> None:
    if not is_float(el):
        raise VerifyException(f"{name}: needs a float element type, got {el}")


def count_dynamic(t: Attribute) -> int:
    return sum(1 for d in shape(t) if d == DYN)


class Unary(IRDLOperation):
    """Elementwise op of one operand; the result has the operand's type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])


class AlongDim(IRDLOperation):
    """One operand transformed along dim `dim` (scans, softmax); the result has the operand's type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `dim` `=` $dim attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, dim: int):
        super().__init__(operands=[input], result_types=[input.type], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self):
        check_dims(self.name, [self.dim.value.data], max(1, len(shape(self.input))))


class Predicate(IRDLOperation):
    """Elementwise test of one operand; the result is i1 of the operand's shape."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[TensorType(i1, shape(input))])

    def verify_(self):
        if element(self.result) != i1:
            raise VerifyException(f"{self.name}: result must have i1 elements")
        check_shape(self.name, "result", shape(self.result), shape(self.input))


class Binary(IRDLOperation):
    """Elementwise op of two operands of one element type, broadcast numpy-style to the result's shape."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute | None = None):
        if result_type is None:
            out = broadcast_shapes(self.name, shape(lhs), shape(rhs))
            result_type = TensorType(self.result_element(element(lhs)), out)
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return operand_element

    def verify_(self):
        if element(self.lhs) != element(self.rhs):
            raise VerifyException(
                f"{self.name}: operand element types {element(self.lhs)} and {element(self.rhs)} differ"
            )
        if element(self.result) != self.result_element(element(self.lhs)):
            raise VerifyException(f"{self.name}: result element type {element(self.result)} is wrong")
        expected = broadcast_shapes(self.name, shape(self.lhs), shape(self.rhs))
        check_shape(self.name, "result", shape(self.result), expected)


class Compare(Binary):
    """Elementwise comparison: operands of one element type, broadcast; the result has i1 elements."""

    @classmethod
    def result_element(cls, operand_element: Attribute) -> Attribute:
        return i1


def index_operands(values: Sequence[SSAValue]) -> list[SSAValue]:
    for v in values:
        assert isinstance(v.type, IndexType), v
    return list(values)
