"""The `loop` dialect: iteration spaces whose scalar bodies (xDSL arith/math) compute one output element.

A `loop.nest` names an iteration space (one extent per dim, an affine expression of the nest's
index symbols) and marks each dim `parallel` or `reduction`. Its body is a DAG of scalar ops
evaluated at every point of the space: `loop.load` reads a tensor (or, at the mem stage, a
buffer) through an affine index map of the point, `loop.index` gives an affine function of the
point, `loop.reduce` combines a value over all reduction dims (its result no longer depends on
them), and `loop.yield` names the outputs. An output whose reduction dims have size 1 holds a
value that does not vary over them; any other output is written at every point. So one nest can
chain reductions and a pointwise epilogue over the same rows (softmax: max, exp-sum, divide).

Loads may also take data-dependent indices (gathers): the map then has one extra dim per index
operand, after the nest's dims. Views never copy: reshape, permute, expand, slice and broadcast
are index maps (floordiv/mod, zero coefficients). The body references the tensors it loads from
by SSA value directly; the symbols of every map in the body are the nest's `symbols` operands.
"""

from collections.abc import Iterator
from enum import auto

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import EffectInstance, HasParent, IsTerminator, MemoryEffect, MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from .affine_forms import linear_coefficients

PARALLEL, REDUCTION = "parallel", "reduction"
DYN = DYNAMIC_INDEX


class ReduceKind(StrEnum):
    sum = auto()
    prod = auto()
    max = auto()  # NaN-propagating on floats
    min = auto()
    any = auto()  # i1 or
    all = auto()  # i1 and
    argmax = auto()  # i64 position along the single reduction dim; first on ties, NaN counts as the extreme
    argmin = auto()


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    name = "loop.reduce_kind"


def _element(t: Attribute) -> Attribute:
    assert isinstance(t, TensorType | MemRefType)
    return t.get_element_type()


class _NestEffects(MemoryEffect):
    """A tensor-form nest is pure; a buffer-form nest writes its `outs` (and reads what it loads)."""

    @classmethod
    def get_effects(cls, op: Operation):
        if isinstance(op, NestOp) and op.outs:
            return {EffectInstance(MemoryEffectKind.WRITE), EffectInstance(MemoryEffectKind.READ)}
        return set()


@irdl_op_definition
class NestOp(IRDLOperation):
    """An iteration space and a scalar body computing one element per point (tensor results, or `outs` buffers).
    %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4x1xf32> {
      %c = arith.constant 1.0 : f32
      %s = loop.reduce sum %c : f32 -> f32
      loop.yield %s : f32
    }"""

    name = "loop.nest"
    symbols = var_operand_def(IndexType)
    outs = var_operand_def(MemRefType)
    space = prop_def(AffineMapAttr)
    iterators = prop_def(ArrayAttr[StringAttr])
    res = var_result_def(TensorType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(_NestEffects())
    assembly_format = (
        "`space` `=` $space (`symbols` `(` $symbols^ `)`)? `iterators` `=` $iterators "
        "(`outs` `(` $outs^ `:` type($outs) `)`)? attr-dict-with-keyword (`:` type($res)^)? $body"
    )

    def __init__(self, space: AffineMap, iterators, symbols=(), result_types=(), outs=(), body: Region | None = None):
        props = {"space": AffineMapAttr(space), "iterators": ArrayAttr([StringAttr(i) for i in iterators])}
        super().__init__(
            operands=[list(symbols), list(outs)],
            result_types=[list(result_types)],
            properties=props,
            regions=[body if body is not None else Region(Block())],
        )

    # -- queries (used by lowering, fusion, bufferization and the targets) -----------------------
    @property
    def rank(self) -> int:
        return len(self.space.data.results)

    @property
    def extents(self) -> tuple[AffineExpr, ...]:
        return self.space.data.results

    def iterator_kinds(self) -> list[str]:
        return [s.data for s in self.iterators.data]

    def reduction_dims(self) -> list[int]:
        return [i for i, k in enumerate(self.iterator_kinds()) if k == REDUCTION]

    def parallel_dims(self) -> list[int]:
        return [i for i, k in enumerate(self.iterator_kinds()) if k == PARALLEL]

    @property
    def yield_op(self) -> "YieldOp":
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def space_shape(self, reduced: bool) -> list[int]:
        """The space as a static shape (`?` for symbolic extents), with reduction dims 1 when `reduced`."""
        red = set(self.reduction_dims()) if reduced else set()
        return [
            1 if d in red else (e.value if isinstance(e, AffineConstantExpr) else DYN)
            for d, e in enumerate(self.extents)
        ]

    def output_kind(self, i: int) -> str | None:
        """ "full" when output i holds a value per point, "reduced" when it has size 1 along the reduction dims.

        An output may add or drop size-1 dims (the row-major order is the same), so a reduction
        writes its keepdim=False result directly."""
        out = _units_dropped(self.output_types()[i].get_shape())
        if out == _units_dropped(self.space_shape(False)):
            return "full"
        if out == _units_dropped(self.space_shape(True)):
            return "reduced"
        return None

    def output_types(self) -> list[Attribute]:
        return [v.type for v in self.outs] if self.outs else [r.type for r in self.res]

    def loads(self) -> Iterator["LoadOp"]:
        for op in self.body.block.ops:
            if isinstance(op, LoadOp):
                yield op

    def inputs(self) -> list[SSAValue]:
        """The tensors or buffers the body loads from, in order of first load."""
        seen: dict[SSAValue, None] = {}
        for ld in self.loads():
            seen.setdefault(ld.source, None)
        return list(seen)

    def verify_(self):
        space = self.space.data
        if space.num_dims != 0 or space.num_symbols != len(self.symbols):
            raise VerifyException(
                f"{self.name}: space must be a map ()[s0..] -> (extents) with one symbol per symbol operand"
            )
        kinds = self.iterator_kinds()
        if len(kinds) != self.rank or any(k not in (PARALLEL, REDUCTION) for k in kinds):
            raise VerifyException(f'{self.name}: needs one iterator ("parallel" or "reduction") per dim')
        if bool(self.res) == bool(self.outs):
            raise VerifyException(f"{self.name}: has either tensor results or `outs` buffers, not both or neither")
        body = self.body.block
        if not isinstance(body.last_op, YieldOp):
            raise VerifyException(f"{self.name}: body must end with loop.yield")
        if body.args:
            raise VerifyException(f"{self.name}: body takes no block arguments")
        outs = self.output_types()
        values = list(body.last_op.values)
        if len(values) != len(outs):
            raise VerifyException(f"{self.name}: yields {len(values)} values for {len(outs)} outputs")
        red = self.reduction_dims()
        for i, (v, t) in enumerate(zip(values, outs)):
            if v.type != _element(t):
                raise VerifyException(f"{self.name}: output {i} has element type {_element(t)}, yield gives {v.type}")
            kind = self.output_kind(i)
            if kind is None:
                raise VerifyException(
                    f"{self.name}: output {i} of shape {list(t.get_shape())} is neither the space {self.space_shape(False)} "
                    f"nor its reduced shape {self.space_shape(True)} (up to size-1 dims)"
                )
            if kind == "reduced" and red and dims_of(v) & set(red):
                raise VerifyException(
                    f"{self.name}: output {i} has the reduced shape but its value varies along a reduction dim"
                )
        for op in body.ops:
            if isinstance(op, LoadOp | IndexOp):
                m = op.map.data
                extra = len(op.indices) if isinstance(op, LoadOp) else 0
                if m.num_dims != self.rank + extra or m.num_symbols != len(self.symbols):
                    raise VerifyException(
                        f"{self.name}: {op.name} map {m} needs {self.rank + extra} dims and {len(self.symbols)} symbols"
                    )
            if isinstance(op, ReduceOp) and not red:
                raise VerifyException(f"{self.name}: loop.reduce in a nest without reduction dims")
            if isinstance(op, ReduceOp) and op.kind.data in (ReduceKind.argmax, ReduceKind.argmin) and len(red) != 1:
                raise VerifyException(f"{self.name}: {op.kind.data} needs exactly one reduction dim")


def _units_dropped(shape) -> list[int]:
    return [n for n in shape if n != 1]


def to_space_index(nest: NestOp, i: int, exprs) -> list:
    """An index into output i (one expression per output dim) as an index into the space's (reduced) shape."""
    space = nest.space_shape(nest.output_kind(i) == "reduced")
    out_shape = nest.output_types()[i].get_shape()
    inner = iter(e for e, n in zip(exprs, out_shape) if n != 1)
    return [AffineExpr.constant(0) if n == 1 else next(inner) for n in space]


def dims_of(v: SSAValue) -> frozenset[int]:
    """The iteration dims a body value varies along (loads and index ops by their maps; reduce drops the reduction dims)."""
    cache: dict[SSAValue, frozenset[int]] = {}

    def visit(x: SSAValue) -> frozenset[int]:
        if x in cache:
            return cache[x]
        op = x.owner
        if not isinstance(op, Operation):
            out = frozenset()
        elif isinstance(op, LoadOp):
            nest_rank = op.map.data.num_dims - len(op.indices)
            out = frozenset(d for d in op.map.data.used_dims() if d < nest_rank).union(*(visit(i) for i in op.indices))
        elif isinstance(op, IndexOp):
            out = frozenset(op.map.data.used_dims())
        elif isinstance(op, ReduceOp):
            nest = op.parent_op()
            red = set(nest.reduction_dims()) if isinstance(nest, NestOp) else set()
            out = frozenset(d for d in visit(op.input) if d not in red)
        else:
            out = frozenset().union(*(visit(o) for o in op.operands))
        cache[x] = out
        return out

    return visit(v)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read one element at an affine map of the point (and of data-dependent index operands, as extra map dims).
    An index outside the source gives an unspecified value (never a fault); only a discarded select arm may read one.
    %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xf32> {
      %v = loop.load %x[affine_map<(d0, d1) -> (d1, d0)>] : tensor<8x4xf32> -> f32
      loop.yield %v : f32
    }"""

    name = "loop.load"
    source = operand_def(TensorType | MemRefType)
    indices = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def()
    traits = traits_def(Pure(), HasParent(NestOp))
    assembly_format = "$source `[` $map `]` (`(` $indices^ `)`)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, map: AffineMap, indices=()):
        super().__init__(
            operands=[source, list(indices)],
            result_types=[_element(source.type)],
            properties={"map": AffineMapAttr(map)},
        )

    def verify_(self):
        m = self.map.data
        if len(m.results) != len(self.source.type.get_shape()):
            raise VerifyException(
                f"{self.name}: map has {len(m.results)} results for a rank-{len(self.source.type.get_shape())} source"
            )
        if self.result.type != _element(self.source.type):
            raise VerifyException(f"{self.name}: result type must be the source's element type")


@irdl_op_definition
class IndexOp(IRDLOperation):
    """An affine function of the point (and the nest's symbols) as an index.
    %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "parallel"] : tensor<4x8xi64> {
      %i = loop.index affine_map<(d0, d1) -> (d0 * 8 + d1)>
      %v = arith.index_cast %i : index to i64
      loop.yield %v : i64
    }"""

    name = "loop.index"
    map = prop_def(AffineMapAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure(), HasParent(NestOp))
    assembly_format = "$map attr-dict"

    def __init__(self, map: AffineMap):
        super().__init__(result_types=[IndexType()], properties={"map": AffineMapAttr(map)})

    def verify_(self):
        if len(self.map.data.results) != 1:
            raise VerifyException(f"{self.name}: map must have exactly one result")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Combine a value over all reduction dims of the nest (argmax/argmin: the i64 position along the one reduction dim).
    %r = loop.nest space = affine_map<() -> (4, 8)> iterators = ["parallel", "reduction"] : tensor<4xi64> {
      %v = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32
      %s = loop.reduce argmax %v : f32 -> i64
      loop.yield %s : i64
    }"""

    name = "loop.reduce"
    kind = prop_def(ReduceKindAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure(), HasParent(NestOp))
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, input: SSAValue, result_type: Attribute | None = None):
        if result_type is None:
            from xdsl.dialects.builtin import i64

            result_type = i64 if kind in ("argmax", "argmin") else input.type
        super().__init__(
            operands=[input], result_types=[result_type], properties={"kind": ReduceKindAttr(ReduceKind(kind))}
        )

    def verify_(self):
        from xdsl.dialects.builtin import i1, i64

        k = self.kind.data
        want = i64 if k in (ReduceKind.argmax, ReduceKind.argmin) else self.input.type
        if self.result.type != want:
            raise VerifyException(f"{self.name}: {k} of {self.input.type} gives {want}")
        if k in (ReduceKind.any, ReduceKind.all) and self.input.type != i1:
            raise VerifyException(f"{self.name}: {k} needs i1")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The nest's outputs at this point.
    %r:2 = loop.nest space = affine_map<() -> (4)> iterators = ["parallel"] : tensor<4xf32>, tensor<4xf32> {
      %a = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<4xf32> -> f32
      %b = math.exp %a : f32
      loop.yield %a, %b : f32, f32
    }"""

    name = "loop.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(NestOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A strided view of a tensor (what an extern reads a view through): element p is the source's element at map(p).
    The map is linear with non-negative coefficients, so it is never a copy.
    %t = loop.view %w[affine_map<(d0, d1) -> (d1, d0)>] : tensor<8x4xf32> -> tensor<4x8xf32>"""

    name = "loop.view"
    source = operand_def(TensorType)
    sizes = var_operand_def(IndexType)
    map = prop_def(AffineMapAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$source `[` $map `]` (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, map: AffineMap, result_type: Attribute, sizes=()):
        super().__init__(
            operands=[source, list(sizes)], result_types=[result_type], properties={"map": AffineMapAttr(map)}
        )

    def verify_(self):
        m = self.map.data
        out = self.result.type.get_shape()
        if m.num_dims != len(out) or len(m.results) != len(self.source.type.get_shape()) or m.num_symbols:
            raise VerifyException(
                f"{self.name}: map must take the result's {len(out)} dims to the source's indices, no symbols"
            )
        if sum(1 for d in out if d == DYN) != len(self.sizes):
            raise VerifyException(f"{self.name}: one size operand per `?` dim of the result")
        if _element(self.source.type) != _element(self.result.type):
            raise VerifyException(f"{self.name}: result element type must be the source's")
        if linear_coefficients(m) is None:
            raise VerifyException(f"{self.name}: map {m} is not linear with non-negative coefficients")


LoopDialect = Dialect("loop", [NestOp, LoadOp, IndexOp, ReduceOp, YieldOp, ViewOp], [ReduceKindAttr])

__all__ = [
    "LoopDialect",
    "NestOp",
    "LoadOp",
    "IndexOp",
    "ReduceOp",
    "YieldOp",
    "ViewOp",
    "ReduceKind",
    "ReduceKindAttr",
    "PARALLEL",
    "REDUCTION",
    "dims_of",
    "linear_coefficients",
    "to_space_index",
]
