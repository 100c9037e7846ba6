"""The `mem` dialect: buffers and the launch sequence a host runtime runs.

After bufferization `@main` takes the graph inputs as buffers (`memref`s of any strides), owns one
arena whose slots (typed views at byte offsets, planned by liveness) hold the intermediates,
allocates the graph outputs (returned), and runs, in order: `mem.launch` of kernels (each a
`func.func` whose body is one buffer-form `loop.nest`), and `mem.extern` calls of torch kernels
(matmul, convolution, eager fallbacks), whose region says, as tn ops on tensors, what they compute.
"""

from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, MemoryAllocEffect, MemoryWriteEffect, NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException

from .loop import DYN, linear_coefficients


def nbytes_of(t: MemRefType) -> int | None:
    """Bytes of a static buffer (None for a symbolic shape)."""
    n = 1
    for d in t.get_shape():
        if d == DYN:
            return None
        n *= d
    from irc.ir.types import torch_dtype

    return n * torch_dtype(t.get_element_type()).itemsize


@irdl_op_definition
class ArenaOp(IRDLOperation):
    """The one block of memory that holds every planned intermediate.   %a = mem.arena : memref<4096xi8>"""

    name = "mem.arena"
    result = result_def(MemRefType)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, nbytes: int):
        from xdsl.dialects.builtin import i8

        super().__init__(result_types=[MemRefType(i8, [nbytes])])

    def verify_(self):
        shape = self.result.type.get_shape()
        if len(shape) != 1 or shape[0] == DYN or self.result.type.get_element_type().width.data != 8:
            raise VerifyException(f"{self.name}: result must be a static 1-d i8 memref")


@irdl_op_definition
class SlotOp(IRDLOperation):
    """A contiguous typed buffer at a byte offset of the arena.   %t = mem.slot %a offset = 64 : memref<4096xi8> -> memref<4x4xf32>"""

    name = "mem.slot"
    arena = operand_def(MemRefType)
    offset = prop_def(IntegerAttr[i64])
    result = result_def(MemRefType)
    traits = traits_def(NoMemoryEffect())
    assembly_format = "$arena `offset` `=` $offset attr-dict `:` type($arena) `->` type($result)"

    def __init__(self, arena: SSAValue, offset: int, result_type: MemRefType):
        super().__init__(operands=[arena], result_types=[result_type], properties={"offset": IntegerAttr(offset, i64)})

    def verify_(self):
        size = nbytes_of(self.result.type)
        total = self.arena.type.get_shape()[0]
        if size is None or self.offset.value.data < 0 or self.offset.value.data + size > total:
            raise VerifyException(
                f"{self.name}: a static buffer of {size} bytes at {self.offset.value.data} does not fit the arena of {total}"
            )


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A fresh contiguous buffer (graph outputs, and intermediates of symbolic size).   %o = mem.alloc [%n] : memref<?x8xf32>"""

    name = "mem.alloc"
    sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "(`[` $sizes^ `]`)? attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType, sizes=()):
        super().__init__(operands=[list(sizes)], result_types=[result_type])

    def verify_(self):
        if len(self.sizes) != sum(1 for d in self.result.type.get_shape() if d == DYN):
            raise VerifyException(f"{self.name}: one size operand per `?` dim")


@irdl_op_definition
class DimOp(IRDLOperation):
    """The size of one dim of a buffer.   %n = mem.dim %x dim = 0 : memref<?x8xf32>"""

    name = "mem.dim"
    source = operand_def(MemRefType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$source `dim` `=` $dim attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, dim: int):
        super().__init__(operands=[source], result_types=[IndexType()], properties={"dim": IntegerAttr(dim, i64)})


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A strided view (no copy): element p is the source's element at map(p), a linear map with non-negative coefficients.
    %v = mem.view %w[affine_map<(d0, d1) -> (d1, d0)>] : memref<8x4xf32> -> memref<4x8xf32, strided<[?, ?], offset: ?>>"""

    name = "mem.view"
    source = operand_def(MemRefType)
    sizes = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source `[` $map `]` (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, map, result_type: MemRefType, sizes=()):
        super().__init__(
            operands=[source, list(sizes)], result_types=[result_type], properties={"map": AffineMapAttr(map)}
        )

    def verify_(self):
        if linear_coefficients(self.map.data) is None or self.map.data.num_symbols:
            raise VerifyException(f"{self.name}: map must be linear with non-negative coefficients and no symbols")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """The same contiguous buffer under another shape (no copy); `?` dims sized by the index operands.
    %v = mem.reshape %t[%n] : memref<?x8xf32> -> memref<?xf32>"""

    name = "mem.reshape"
    source = operand_def(MemRefType)
    sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source (`[` $sizes^ `]`)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: MemRefType, sizes=()):
        super().__init__(operands=[source, list(sizes)], result_types=[result_type])

    def verify_(self):
        for t in (self.source.type, self.result.type):
            if not is_contiguous(t):
                raise VerifyException(f"{self.name}: source and result must be contiguous buffers")
        if len(self.sizes) != sum(1 for d in self.result.type.get_shape() if d == DYN):
            raise VerifyException(f"{self.name}: one size operand per `?` dim")


def is_contiguous(t: MemRefType) -> bool:
    from xdsl.dialects.builtin import NoneAttr

    return isinstance(t.layout, NoneAttr)


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a kernel (a func.func holding one buffer-form loop.nest) on buffers; its arguments are ins, outs, symbols.
    mem.launch @kernel0 ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)"""

    name = "mem.launch"
    callee = prop_def(SymbolRefAttr)
    ins = var_operand_def(MemRefType)
    outs = var_operand_def(MemRefType)
    symbols = var_operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$callee (`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)` "
        "(`symbols` `(` $symbols^ `)`)? attr-dict"
    )

    def __init__(self, callee: str, ins, outs, symbols=()):
        super().__init__(operands=[list(ins), list(outs), list(symbols)], properties={"callee": SymbolRefAttr(callee)})


@irdl_op_definition
class ExternOp(IRDLOperation):
    """A call of a torch kernel writing `outs` (and returning fresh buffers for results of symbolic shape); the region
    computes them from the ins as tn ops on tensors (yielding the outs' values first).
    mem.extern ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>) {
    ^bb0(%x: tensor<4x8xf32>, %y: tensor<8x2xf32>):
      %r = tn.mm %x, %y : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
      mem.yield %r : tensor<4x2xf32>
    }"""

    name = "mem.extern"
    ins = var_operand_def()
    outs = var_operand_def(MemRefType)
    res = var_result_def(MemRefType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "(`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)` attr-dict-with-keyword "
        "(`->` type($res)^)? $body"
    )

    def __init__(self, ins, outs, result_types=(), body: Region | None = None):
        super().__init__(
            operands=[list(ins), list(outs)],
            result_types=[list(result_types)],
            regions=[body if body is not None else Region(Block())],
        )

    def verify_(self):
        block = self.body.block
        if [a.type for a in block.args] != [_as_value_type(v.type) for v in self.ins]:
            raise VerifyException(f"{self.name}: block arguments must be the ins as tensors (index values as they are)")
        targets = [b.type for b in self.outs] + [r.type for r in self.res]
        if not isinstance(block.last_op, YieldOp) or len(block.last_op.values) != len(targets):
            raise VerifyException(f"{self.name}: the body must yield one tensor per out buffer and result")
        for v, b in zip(block.last_op.values, targets):
            if v.type != _as_value_type(b):
                raise VerifyException(f"{self.name}: yields {v.type} for a buffer of {b.type}")


def _as_value_type(t: Attribute) -> Attribute:
    if isinstance(t, MemRefType):
        return TensorType(t.get_element_type(), t.get_shape())
    return t


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The tensors an extern's region computes.
    mem.extern outs(%c : memref<4xf32>) {
      %r = tn.rand : tensor<4xf32>
      mem.yield %r : tensor<4xf32>
    }"""

    name = "mem.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ExternOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


MemDialect = Dialect("mem", [ArenaOp, SlotOp, AllocOp, DimOp, ViewOp, ReshapeOp, LaunchOp, ExternOp, YieldOp])

__all__ = [
    "MemDialect",
    "ArenaOp",
    "SlotOp",
    "AllocOp",
    "DimOp",
    "ViewOp",
    "ReshapeOp",
    "is_contiguous",
    "LaunchOp",
    "ExternOp",
    "YieldOp",
    "nbytes_of",
]
