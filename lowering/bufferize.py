"""bufferize: loop stage -> mem stage. Tensors become buffers; every nest becomes a kernel and a launch.

`@main` takes its tensor inputs as buffers of any strides and allocates each graph output once
(`mem.alloc`, returned), so the op computing an output writes it in place. Intermediates get
placeholder allocations marked `irc.intermediate`, which plan-buffers turns into arena slots.
Each nest is outlined into a kernel `func.func @kernelN(ins..., outs..., symbols...)` holding the
nest in buffer form; identical kernels are shared. A loop.view becomes a mem.view; any other op
that is left (a tn op: matmul, convolution, fallbacks) becomes a mem.extern whose region is that op.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, StridedLayoutAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass

from irc.dialects import loop, memory
from irc.dialects import tensor as tn
from irc.ir.cse import structural_key
from irc.ir.types import DYN

INTERMEDIATE = "irc.intermediate"


def buffer_type(t: TensorType, strided: bool = False) -> MemRefType:
    """A tensor type's buffer: contiguous, or (for graph inputs and views) of any strides."""
    if strided:
        return MemRefType(t.get_element_type(), t.get_shape(), StridedLayoutAttr([None] * len(t.get_shape()), None))
    return MemRefType(t.get_element_type(), t.get_shape())


def copy_nest(v: SSAValue) -> loop.NestOp:
    """An identity copy of a tensor (to give a graph output its own buffer)."""
    t = v.type
    shape = t.get_shape()
    syms: list[SSAValue] = []
    extents: list[AffineExpr] = []
    for d, n in enumerate(shape):
        if n == DYN:
            dim = tn.DimOp(v, d)
            syms.append(dim.result)
            extents.append(AffineExpr.symbol(len(syms) - 1))
        else:
            extents.append(AffineExpr.constant(n))
    ld = loop.LoadOp(v, AffineMap(len(shape), len(syms), tuple(AffineExpr.dimension(d) for d in range(len(shape)))))
    nest = loop.NestOp(AffineMap(0, len(syms), tuple(extents)), [loop.PARALLEL] * len(shape), syms, [t])
    nest.body.block.add_ops([ld, loop.YieldOp(ld.result)])
    return nest


def library_fresh(op: Operation) -> bool:
    """Whether the extern for tn op `op` takes its results as the library allocates them (fresh buffers, never
    planned) rather than copying each into a planned one: an eager fallback (its meta shapes can be approximate),
    a convolution and its gradients, heads-last attention and its gradients, an embedding's gradient. torch's
    kernel allocates the convolution's result (NCHW or NHWC), the (batch, rows, heads, d) ones, the gradients or the
    zeroed table (the vocabulary's size) anyway, and a copy into a planned buffer costs one more pass."""
    if isinstance(op, (tn.QConvOp, tn.QLinearOp, tn.QLinearDynamicOp, tn.WeightInt8MmOp, tn.WeightInt4MmOp)):
        return True
    return isinstance(op, (tn.AtenCallOp, tn.EmbeddingBackwardOp, tn.ConvolutionOp, tn.ConvolutionBackwardOp)) or (
        isinstance(op, (tn.ScaledDotProductAttentionOp, tn.ScaledDotProductAttentionBackwardOp))
        and op.heads_last is not None
    )


def _returned(v: SSAValue) -> bool:
    return any(isinstance(u.operation, func.ReturnOp) for u in v.uses)


def owns_view(v: SSAValue) -> bool:
    """A returned view returned as it is, in eager's layout (no copy): a view of a nest result (whose buffer then
    is the graph's own output, never planned) or of a library's fresh result (never planned either), when no other
    output is or views that result (outputs do not share memory). Other ops may read it: a training forward
    returns q, k and v, the head-split views of a projection, for the backward while its attention reads them."""
    src = v.owner.source
    if (
        sum(isinstance(u.operation, func.ReturnOp) for u in v.uses) != 1
        or not isinstance(src.owner, Operation)
        or _returned(src)
    ):
        return False
    if not isinstance(src.owner, loop.NestOp) and not library_fresh(src.owner):
        return False
    views = (u.operation for u in src.uses if isinstance(u.operation, loop.ViewOp) and u.operation is not v.owner)
    return not any(_returned(w.result) for w in views)


def materialize_outputs(f: func.FuncOp) -> None:
    """Give every returned tensor that is an input, a view or returned twice its own copy."""
    ret = f.body.block.last_op
    seen: set[SSAValue] = set()
    for i, v in enumerate(list(ret.operands)):
        if not isinstance(v.type, TensorType):
            continue
        if v in seen or not isinstance(v.owner, Operation) or isinstance(v.owner, loop.ViewOp) and not owns_view(v):
            nest = copy_nest(v)
            for op in [o.owner for o in nest.symbols] + [nest]:
                f.body.block.insert_op_before(op, ret)
            ret.operands = [*ret.operands[:i], nest.res[0], *ret.operands[i + 1 :]]
        seen.add(ret.operands[i])


class Bufferizer:
    def __init__(
        self,
        module: ModuleOp,
        main: func.FuncOp,
        library_allocates: Callable[[Operation], bool] | None = None,
        kernels: dict[tuple, str] | None = None,
    ):
        self.module, self.main = module, main
        self.library_allocates = library_allocates
        # structural_key of a kernel (named "kernel") -> its name; shared by the module's functions, whose kernels
        # are symbols of the one module
        self.kernels: dict[tuple, str] = {} if kernels is None else kernels
        self.new_funcs: list[func.FuncOp] = []
        self.buf: dict[SSAValue, SSAValue] = {}
        self.ops: list[Operation] = []
        self.outputs = {v for v in main.body.block.last_op.operands if isinstance(v.type, TensorType)}
        self.outputs |= {v.owner.source for v in self.outputs if isinstance(v.owner, loop.ViewOp)}  # owns_view's
        for v in list(self.outputs):  # a returned reshape is a view of its input: that buffer is an output too
            while isinstance(v.owner, tn.ReshapeOp):
                v = v.owner.input
                self.outputs.add(v)

    def emit(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def run(self) -> func.FuncOp:
        old = self.main.body.block
        types = [buffer_type(a.type, strided=True) if isinstance(a.type, TensorType) else a.type for a in old.args]
        block = Block(arg_types=types)
        for a, b in zip(old.args, block.args):
            b.name_hint = a.name_hint
            self.buf[a] = b
        for op in old.ops:
            self.convert(op)
        block.add_ops(self.ops)
        ret = block.last_op
        new = func.FuncOp(self.main.sym_name.data, (types, [v.type for v in ret.operands]), Region(block))
        return new

    def alloc(self, t: TensorType, output: bool, sizes: list[SSAValue]) -> SSAValue:
        op = self.emit(memory.AllocOp(buffer_type(t), sizes))
        if not output:
            op.attributes[INTERMEDIATE] = UnitAttr()
        return op.result

    def convert(self, op: Operation) -> None:
        if isinstance(op, loop.NestOp):
            self.launch(op)
        elif isinstance(op, loop.ViewOp):
            t = buffer_type(op.result.type, strided=True)
            self.buf[op.result] = self.emit(
                memory.ViewOp(self.buf[op.source], op.map.data, t, [self.buf[s] for s in op.sizes])
            ).result
        elif isinstance(op, tn.ReshapeOp) and memory.is_contiguous(self.buf[op.input].type):
            t = buffer_type(op.result.type)
            self.buf[op.result] = self.emit(
                memory.ReshapeOp(self.buf[op.input], t, [self.buf[s] for s in op.sizes])
            ).result
        elif isinstance(op, tn.DimOp):
            self.buf[op.result] = self.emit(memory.DimOp(self.buf[op.input], op.dim.value.data)).result
        elif isinstance(op, func.ReturnOp):
            self.emit(func.ReturnOp(*[self.buf[v] for v in op.operands]))
        elif op.name.startswith("tn."):
            self.extern(op)
        else:
            new = op.clone(value_mapper=self.buf)
            self.emit(new)

    # -- kernels ----------------------------------------------------------------------------------
    def launch(self, nest: loop.NestOp) -> None:
        syms = [self.buf[s] for s in nest.symbols]
        outs = [self.alloc(r.type, r in self.outputs, self.result_sizes(nest, i, syms)) for i, r in enumerate(nest.res)]
        for r, b in zip(nest.res, outs):
            self.buf[r] = b
        ins = nest.inputs()
        name = self.outline(nest, [self.buf[v] for v in ins], outs)
        self.emit(memory.LaunchOp(name, [self.buf[v] for v in ins], outs, syms))

    def result_sizes(self, nest: loop.NestOp, i: int, syms: list[SSAValue]) -> list[SSAValue]:
        """Index values for the `?` dims of output i, computed from the nest's extents."""
        red = set(nest.reduction_dims()) if nest.output_kind(i) == "reduced" else set()
        static = nest.space_shape(bool(red))
        exprs = [e for e, n in zip(nest.extents, static) if n != 1]
        out, inner = [], iter(exprs)
        out_shape = nest.res[i].type.get_shape()
        for n in out_shape:
            if n == 1:
                continue
            e = next(inner)
            if n == DYN:
                out.append(self.affine(e, syms))
        return out

    def affine(self, e: AffineExpr, syms: list[SSAValue]) -> SSAValue:
        """An index value for an affine expression of the symbols (arith ops in @main)."""
        if isinstance(e, AffineSymExpr):
            return syms[e.position]
        if isinstance(e, AffineConstantExpr):
            return self.emit(arith.ConstantOp.from_int_and_width(e.value, IndexType())).result
        assert isinstance(e, AffineBinaryOpExpr)
        a, b = self.affine(e.lhs, syms), self.affine(e.rhs, syms)
        cls = {
            AffineBinaryOpKind.Add: arith.AddiOp,
            AffineBinaryOpKind.Mul: arith.MuliOp,
            AffineBinaryOpKind.FloorDiv: arith.FloorDivSIOp,
            AffineBinaryOpKind.Mod: arith.RemSIOp,
            AffineBinaryOpKind.CeilDiv: arith.CeilDivSIOp,
        }[e.kind]
        return self.emit(cls(a, b)).result

    def outline(self, nest: loop.NestOp, ins: list[SSAValue], outs: list[SSAValue]) -> str:
        arg_types = [b.type for b in ins] + [b.type for b in outs] + [IndexType()] * len(nest.symbols)
        block = Block(arg_types=arg_types)
        n_in, n_out = len(ins), len(outs)
        mapper = dict(zip(nest.inputs(), block.args[:n_in]))
        body = Region()
        nest.body.clone_into(body, value_mapper=mapper)
        kernel = loop.NestOp(
            nest.space.data,
            nest.iterator_kinds(),
            block.args[n_in + n_out :],
            outs=block.args[n_in : n_in + n_out],
            body=body,
        )
        block.add_ops([kernel, func.ReturnOp()])
        f = func.FuncOp("kernel", (arg_types, []), Region(block))
        key = structural_key(f)
        if key not in self.kernels:
            self.kernels[key] = f"kernel{len(self.kernels)}"
            f.sym_name = _sym(self.kernels[key])
            self.new_funcs.append(f)
        return self.kernels[key]

    # -- externs ----------------------------------------------------------------------------------
    def extern(self, op: Operation) -> None:
        ins = [self.buf[v] for v in op.operands]
        if isinstance(op, tn.CheckIndexOp):  # its result is its operand: an extern writing nothing, the buffer shared
            self.buf[op.result] = ins[0]
            block = Block(arg_types=[memory._as_value_type(b.type) for b in ins])
            block.add_ops([op.clone(value_mapper=dict(zip(op.operands, block.args))), memory.YieldOp()])
            self.emit(memory.ExternOp(ins, [], [], Region(block)))
            return
        # so are what the target says its library allocates (the cpu target's oneDNN products by a constant weight)
        fresh = library_fresh(op) or (self.library_allocates is not None and self.library_allocates(op))
        static = [r for r in op.results if DYN not in r.type.get_shape() and not fresh]
        dynamic = [r for r in op.results if DYN in r.type.get_shape() or fresh]
        outs = [self.alloc(r.type, r in self.outputs, []) for r in static]
        block = Block(arg_types=[memory._as_value_type(b.type) for b in ins])
        inner = op.clone(value_mapper=dict(zip(op.operands, block.args)))
        block.add_ops([inner, memory.YieldOp(*[inner.results[list(op.results).index(r)] for r in static + dynamic])])
        ext = self.emit(memory.ExternOp(ins, outs, [buffer_type(r.type) for r in dynamic], Region(block)))
        for r, b in zip(static, outs):
            self.buf[r] = b
        for r, b in zip(dynamic, ext.res):
            self.buf[r] = b


def _sym(name: str) -> Attribute:
    from xdsl.dialects.builtin import StringAttr

    return StringAttr(name)


def bufferize(module: ModuleOp, library_allocates: Callable[[Operation], bool] | None = None) -> None:
    """`library_allocates(op)`: whether the target's library call for the extern `op` allocates its result (it is
    then taken as a fresh buffer instead of copied into a planned one)."""
    mains = [f for f in module.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    kernels: dict[tuple, str] = {}
    for f in mains:
        materialize_outputs(f)
        b = Bufferizer(module, f, library_allocates, kernels)
        new = b.run()
        module.body.block.insert_op_before(new, f)
        f.detach()
        f.erase()
        for k in b.new_funcs:
            module.body.block.add_op(k)


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Tensors become buffers: graph outputs allocated once and written in place, nests outlined into kernels."""

    name = "bufferize"
    library_allocates: Callable[[Operation], bool] | None = field(default=None, compare=False, repr=False)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        bufferize(module, self.library_allocates)
