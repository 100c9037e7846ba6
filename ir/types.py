"""torch.dtype <-> xDSL element type, and shapes with symbolic (`?`) dims."""

from collections.abc import Sequence

import torch
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

DYN = DYNAMIC_INDEX
_ui8 = IntegerType(8, Signedness.UNSIGNED)

DTYPE_TO_ELEMENT: dict[torch.dtype, Attribute] = {
    torch.float32: f32,
    torch.float64: f64,
    torch.float16: f16,
    torch.bfloat16: bf16,
    torch.bool: i1,
    torch.int8: i8,
    torch.uint8: _ui8,
    torch.int16: i16,
    torch.int32: i32,
    torch.int64: i64,
    torch.complex64: ComplexType(f32),
    torch.complex128: ComplexType(f64),
}
ELEMENT_TO_DTYPE: dict[Attribute, torch.dtype] = {v: k for k, v in DTYPE_TO_ELEMENT.items()}

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)


class UnsupportedDtype(TypeError):
    pass


def element_type(dtype: torch.dtype) -> Attribute:
    try:
        return DTYPE_TO_ELEMENT[dtype]
    except KeyError:
        raise UnsupportedDtype(f"irc has no element type for {dtype}") from None


def torch_dtype(element: Attribute) -> torch.dtype:
    return ELEMENT_TO_DTYPE[element]


def is_float(element: Attribute) -> bool:
    return isinstance(element, FLOAT_TYPES)


def is_int(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.width.data > 1


def is_bool(element: Attribute) -> bool:
    return element == i1


def static_dim(d) -> int:
    """An int for a concrete size (a SymInt the ShapeEnv specialised to a number too), DYNAMIC_INDEX (`?`) for a
    symbolic one (SymInt or sympy expr)."""
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    return int(d) if is_concrete_int(d) else DYNAMIC_INDEX


def tensor_type(dtype: torch.dtype, shape: Sequence) -> TensorType:
    return TensorType(element_type(dtype), [static_dim(d) for d in shape])


def shape_of(t: Attribute) -> tuple[int, ...]:
    """Static shape of a TensorType, with DYN for `?` dims."""
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def rank(t: Attribute) -> int:
    assert isinstance(t, TensorType)
    return t.get_num_dims()
