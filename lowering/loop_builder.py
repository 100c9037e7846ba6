"""Building `loop.nest` ops: a space, symbols for its dynamic sizes, loads, index values, scalar arithmetic.

Values in a body are kept in a *compute type*: the storage element type, except f16/bf16 which
compute in f32 (loads widen, yields narrow, as eager's CPU kernels do). The scalar helpers pick
the arith/math op for the operand types (addf or addi, cmpf or cmpi, ...).
"""

from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AffineMapAttr,
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnitAttr,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN, is_float

Extent = int | SSAValue | AffineExpr
# on a tn.convert: it rounds an op's float32 result once (an importer's, as eager's kernel does), not the program's
# own cast; on an arith.truncf: an op's result rounded at its store, which fusion may skip where the value stays in
# the fused body (lowering/fusion/transform.py)
OP_ROUNDING = "irc.op_rounding"


class Unsupported(Exception):
    """This tn op (with these types) has no loop form; it stays a tn op (an extern) with this reason."""


def compute_type(el: Attribute) -> Attribute:
    """What a body computes an element in: f32 for the narrow floats; an unsigned integer zero-extended into a signless
    one twice as wide (signed arith then means the unsigned thing, and the store truncates mod 2**width as torch wraps)."""
    if _unsigned(el):
        return IntegerType(2 * el.width.data)
    return f32 if isinstance(el, Float16Type | BFloat16Type) else el


def _unsigned(el: Attribute) -> bool:
    return isinstance(el, IntegerType) and el.signedness.data == Signedness.UNSIGNED


def check_element(el: Attribute) -> None:
    if _unsigned(el) and el.width.data != 8:
        raise Unsupported(f"no loop form for unsigned element type {el}")
    if not (is_float(el) or isinstance(el, IntegerType)):
        raise Unsupported(f"no loop form for element type {el}")


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def element(v: SSAValue) -> Attribute:
    return v.type.get_element_type()


class NestBuilder:
    """Collects a nest's body; `pre` holds ops that must come before it (tn.dim for dynamic sizes)."""

    def __init__(self, space: Sequence[Extent] = (), iterators: Sequence[str] | None = None):
        self.syms: list[SSAValue] = []
        self.pre: list[Operation] = []
        self.body: list[Operation] = []
        self.set_space(space, iterators)

    def set_space(self, space: Sequence[Extent], iterators: Sequence[str] | None = None) -> None:
        self.space = [self.extent(e) for e in space]
        self.iterators = list(iterators) if iterators is not None else [loop.PARALLEL] * len(self.space)

    # -- space and symbols --------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.space)

    def sym(self, v: SSAValue) -> AffineExpr:
        if v not in self.syms:
            self.syms.append(v)
        return AffineExpr.symbol(self.syms.index(v))

    def extent(self, e: Extent) -> AffineExpr:
        if isinstance(e, AffineExpr):
            return e
        return AffineExpr.constant(e) if isinstance(e, int) else self.sym(e)

    def size(self, tensor: SSAValue, d: int) -> AffineExpr:
        """Dim d of a tensor as an expression: a constant, or a symbol bound to a `tn.dim` placed before the nest."""
        n = shape(tensor)[d]
        if n != DYN:
            return AffineExpr.constant(n)
        for op in self.pre:
            if isinstance(op, tn.DimOp) and op.input == tensor and op.dim.value.data == d:
                return self.sym(op.result)
        dim = tn.DimOp(tensor, d)
        self.pre.append(dim)
        return self.sym(dim.result)

    def sizes(self, tensor: SSAValue) -> list[AffineExpr]:
        return [self.size(tensor, d) for d in range(len(shape(tensor)))]

    def dim(self, k: int) -> AffineExpr:
        return AffineExpr.dimension(k)

    def dims(self) -> list[AffineExpr]:
        return [AffineExpr.dimension(k) for k in range(self.rank)]

    # -- body -------------------------------------------------------------------------------------
    def emit(self, op: Operation) -> SSAValue:
        self.body.append(op)
        return op.results[0]

    def load(self, src: SSAValue, exprs: Sequence[AffineExpr | int], indices: Sequence[SSAValue] = ()) -> SSAValue:
        """src[exprs] in compute type; `indices` are extra map dims d{rank}, d{rank+1}, ... (data-dependent)."""
        el = element(src)
        check_element(el)
        exprs = [AffineExpr.constant(e) if isinstance(e, int) else e for e in exprs]
        v = self.emit(
            loop.LoadOp(src, AffineMap(self.rank + len(indices), 0, tuple(exprs)), [self.to_index(i) for i in indices])
        )
        return self.cast(v, compute_type(el))

    def index(self, expr: AffineExpr) -> SSAValue:
        return self.emit(loop.IndexOp(AffineMap(self.rank, 0, (expr,))))

    def reduce(self, kind: str, v: SSAValue) -> SSAValue:
        return self.emit(loop.ReduceOp(kind, v))

    def finish(
        self, yields: Sequence[SSAValue], result_types: Sequence[Attribute], op_rounding: bool = True
    ) -> list[Operation]:
        """The ops replacing a tn op: `pre`, then the nest (its results are the last op's results). `op_rounding`:
        a narrowing of a yield is the op's own rounding of its result (False: the program's cast, tn.convert)."""
        for t in result_types:
            check_element(t.get_element_type())
        computed, yields = yields, [self.cast(v, t.get_element_type()) for v, t in zip(yields, result_types)]
        for v, c in zip(yields, computed):
            if op_rounding and v is not c and isinstance(v.owner, arith.TruncFOp):
                v.owner.attributes[OP_ROUNDING] = UnitAttr()
        nsyms = len(self.syms)
        for op in self.body:
            if isinstance(op, loop.LoadOp | loop.IndexOp):
                m = op.map.data
                op.properties["map"] = AffineMapAttr(AffineMap(m.num_dims, nsyms, m.results))
        self.body.append(loop.YieldOp(*yields))
        nest = loop.NestOp(AffineMap(0, nsyms, tuple(self.space)), self.iterators, self.syms, result_types)
        nest.body.block.add_ops(self.body)
        return [*self.pre, nest]

    # -- scalars ----------------------------------------------------------------------------------
    def const(self, value, t: Attribute) -> SSAValue:
        if isinstance(t, IndexType) or isinstance(t, IntegerType):
            return self.emit(arith.ConstantOp(IntegerAttr(int(value), t)))
        return self.emit(arith.ConstantOp(FloatAttr(float(value), t)))

    def like(self, value, v: SSAValue) -> SSAValue:
        return self.const(value, v.type)

    def to_index(self, v: SSAValue) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if v.type == i1:
            v = self.emit(arith.ExtUIOp(v, i64))
        return self.emit(arith.IndexCastOp(v, IndexType()))

    def cast(self, v: SSAValue, to: Attribute) -> SSAValue:
        """torch's conversion rules between compute types (float->int truncates, nonzero->true)."""
        src = v.type
        if src == to:
            return v
        if isinstance(src, IndexType):
            return (
                self.cast(self.emit(arith.IndexCastOp(v, i64)), to)
                if to != i64
                else self.emit(arith.IndexCastOp(v, i64))
            )
        if isinstance(to, IndexType):
            return self.to_index(v)
        if to == i1:
            if is_float(src):
                return self.emit(arith.CmpfOp(v, self.like(0, v), "une"))
            return self.emit(arith.CmpiOp(v, self.like(0, v), "ne"))
        if is_float(src) and is_float(to):
            if src.bitwidth == to.bitwidth:  # bf16 <-> f16 goes through f32
                return self.cast(self.cast(v, f32), to)
            return self.emit(arith.ExtFOp(v, to) if src.bitwidth < to.bitwidth else arith.TruncFOp(v, to))
        if is_float(src):
            if _unsigned(to):  # through a signed integer, then wrapped: x86's conversion, as eager's
                return self.cast(self.cast(v, i64), to)
            return self.emit(arith.FPToSIOp(v, to))
        if is_float(to):
            return self.emit((arith.UIToFPOp if src == i1 or _unsigned(src) else arith.SIToFPOp)(v, to))
        if src == i1 or (_unsigned(src) and src.width.data < to.width.data):
            return self.emit(arith.ExtUIOp(v, to))
        if src.width.data < to.width.data:
            return self.emit(arith.ExtSIOp(v, to))
        return self.emit(arith.TruncIOp(v, to))

    def binary(self, fcls, icls, a: SSAValue, b: SSAValue, bcls=None) -> SSAValue:
        """fcls on floats, icls on integers, bcls (when given) on i1."""
        cls = fcls if is_float(a.type) else (bcls if (bcls is not None and a.type == i1) else icls)
        return self.emit(cls(a, b))

    def add(self, a, b):
        return self.binary(arith.AddfOp, arith.AddiOp, a, b, arith.OrIOp)

    def sub(self, a, b):
        return self.binary(arith.SubfOp, arith.SubiOp, a, b, arith.XOrIOp)

    def mul(self, a, b):
        return self.binary(arith.MulfOp, arith.MuliOp, a, b, arith.AndIOp)

    def div(self, a, b):
        return self.binary(arith.DivfOp, arith.DivSIOp, a, b)

    def max(self, a, b):
        return self.binary(arith.MaximumfOp, arith.MaxSIOp, a, b, arith.OrIOp)

    def min(self, a, b):
        return self.binary(arith.MinimumfOp, arith.MinSIOp, a, b, arith.AndIOp)

    def neg(self, a):
        if is_float(a.type):
            return self.emit(arith.NegfOp(a))
        return a if a.type == i1 else self.emit(arith.SubiOp(self.like(0, a), a))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """pred in eq, ne, lt, le, gt, ge: ordered for floats (ne: unordered, as torch), signed for ints."""
        if is_float(a.type):
            return self.emit(arith.CmpfOp(a, b, "une" if pred == "ne" else "o" + pred))
        if pred in ("eq", "ne"):
            return self.emit(arith.CmpiOp(a, b, pred))
        return self.emit(arith.CmpiOp(a, b, ("u" if a.type == i1 else "s") + pred))

    def select(self, c, a, b):
        return self.emit(arith.SelectOp(c, a, b))

    def math(self, cls, *args):
        return self.emit(cls(*args))

    def fexp(self, x):
        return self.emit(math.ExpOp(x))

    def cmp_index(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.CmpiOp(a, b, pred))

    def index_const(self, value: int) -> SSAValue:
        return self.const(value, IndexType())

    def all_of(self, conds: Sequence[SSAValue]) -> SSAValue | None:
        out = None
        for c in conds:
            out = c if out is None else self.emit(arith.AndIOp(out, c))
        return out


def in_range(b: NestBuilder, expr: AffineExpr, lo: AffineExpr | None, hi: AffineExpr | None):
    """lo <= expr < hi as an i1 (either bound may be absent)."""
    i = b.index(expr)
    conds = []
    for bound, pred in ((lo, "sge"), (hi, "slt")):
        if bound is not None:
            value = b.index_const(bound.value) if isinstance(bound, AffineConstantExpr) else b.index(bound)
            conds.append(b.cmp_index(pred, i, value))
    return b.all_of(conds)


def broadcast_exprs(src_shape: Sequence[int], out_shape: Sequence[int], dims: Sequence[AffineExpr]) -> list[AffineExpr]:
    """The index into a numpy-broadcast operand: right-aligned dims, 0 where the operand has size 1 and the result not."""
    off = len(out_shape) - len(src_shape)
    return [
        AffineExpr.constant(0) if s == 1 and out_shape[i + off] != 1 else dims[i + off] for i, s in enumerate(src_shape)
    ]


def result_type(op: Operation, i: int = 0) -> TensorType:
    return op.results[i].type
