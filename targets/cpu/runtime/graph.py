"""The CPU target's view of a mem-stage @main: roots, cells and the step sequence, before any code exists.

Every buffer is a *root* (a graph input, the arena, a mem.alloc, an extern's fresh result) seen through
sizes, strides and an offset (`Buf`, in elements). Every runtime integer lives in a numbered *cell* of one
per-call frame (an int64 array): root addresses first, then the symbolic sizes, strides and index values
the graph needs, each cell filled once per call from where it first appears (an input's shape, a SymInt
argument, an extern's result). Static quantities never get a cell: kernels see them as constants.
Quantities are `affine.Lin` forms over cells; what is not linear (products of runtime sizes) becomes a
derived cell computed in order. `ArgSpec` says what the compiled code assumes about each argument
(dtype, sizes, strides, each an int or a symbolic key); the runtime checks it on entry.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace

import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from irc.dialects import loop, memory
from irc.ir.types import torch_dtype
from irc.targets.args import ArgSpec

from ..codegen.affine import Lin, row_major
from ..codegen.types import Unsupported


@dataclass(frozen=True)
class Buf:
    root: int
    elem: object
    sizes: tuple[Lin, ...]
    strides: tuple[Lin, ...]
    offset: Lin

    @property
    def dtype(self) -> torch.dtype:
        return torch_dtype(self.elem)


@dataclass
class Root:
    kind: str  # "input" | "arena" | "alloc" | "extern"
    cell: int  # the cell holding its address
    arg: int | None = None  # input: the argument index
    nbytes: int = 0  # arena
    buf: Buf | None = None  # alloc: the whole buffer; input: the result that is the whole input (write_in_place)


@dataclass
class Step:
    kind: str  # "launch" | "extern" | "alloc" | "derive"
    op: object = None
    ins: list = field(default_factory=list)  # Bufs, Lins (extern index operands)
    outs: list = field(default_factory=list)  # Bufs
    syms: list = field(default_factory=list)  # Lins
    root: int | None = None  # alloc: the root it creates
    results: list = field(default_factory=list)  # extern: (root, rank, size cells) per fresh result
    cell: int | None = None  # derive: the cell computed
    fn: object = None  # derive: (int, int) -> int, applied to the values of ins (two Lins)


@dataclass
class Graph:
    args: list[ArgSpec]
    roots: list[Root] = field(default_factory=list)
    ncells: int = 0
    sources: dict = field(default_factory=dict)  # cell -> ("size"|"stride", arg, dim) | ("index", arg)
    checks: list = field(default_factory=list)  # (cell, ("size"|"stride", arg, dim) | ("index", arg)): must equal
    steps: list[Step] = field(default_factory=list)
    returns: list = field(default_factory=list)  # Buf | Lin per func.return operand
    kernels: dict[str, loop.NestOp] = field(default_factory=dict)
    in_place: list[int] = field(
        default_factory=list
    )  # inputs whose new values the program writes into them (write_in_place)

    def new_cell(self) -> int:
        self.ncells += 1
        return self.ncells - 1

    def dead_after(self) -> dict[int, list[int]]:
        """Step index -> the per-call roots (allocations, extern results) that step is the last to name and no result
        is: a call drops them there, so the allocator hands their memory, still in cache, to the call's next buffer
        (held to the end of the call, every library result lands in memory no step touched lately)."""
        per_call = {r for r, root in enumerate(self.roots) if root.kind in ("alloc", "extern")}
        per_call -= {b.root for b in self.returns if isinstance(b, Buf)}
        last: dict[int, int] = {}
        for i, st in enumerate(self.steps):
            named = {x.root for x in (*st.ins, *st.outs) if isinstance(x, Buf)} | {r for r, *_ in st.results}
            for r in named | ({st.root} if st.root is not None else set()):
                last[r] = i
        dead: dict[int, list[int]] = {}
        for r, i in last.items():
            if r in per_call:
                dead.setdefault(i, []).append(r)
        return dead


class Planner:
    def __init__(self, module: ModuleOp, args: list[ArgSpec], entry: str = "main"):
        funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks}
        self.main = funcs[entry]
        self.g = Graph(list(args))
        for name, f in funcs.items():
            nests = [o for o in f.body.block.ops if isinstance(o, loop.NestOp) and o.outs]
            if nests:
                self.g.kernels[name] = nests[0]
        self.val: dict = {}
        self.keys: dict[str, int] = {}

    # -- quantities ---------------------------------------------------------------------------------
    def quantity(self, x, where) -> Lin:
        """An ArgSpec size/stride/value (int or symbolic key) as a Lin; the first sight of a key gives it a cell."""
        if isinstance(x, int):
            return Lin(x)
        if x in self.keys:
            self.g.checks.append((self.keys[x], where))
            return Lin.cell(self.keys[x])
        c = self.keys[x] = self.g.new_cell()
        self.g.sources[c] = where
        return Lin.cell(c)

    def derive(self, fn, a: Lin, b: Lin) -> Lin:
        """A cell holding fn(a, b), computed once per call (what is not linear in the cells)."""
        c = self.g.new_cell()
        self.g.steps.append(Step("derive", ins=[a, b], cell=c, fn=fn))
        return Lin.cell(c)

    def product(self, a: Lin, b: Lin) -> Lin:
        if a.static or b.static:
            return a * b
        return self.derive(operator.mul, a, b)

    def strides_of(self, sizes) -> tuple[Lin, ...]:
        out, step = [], Lin(1)
        for n in reversed(sizes):
            out.append(step)
            step = self.product(step, n)
        return tuple(out[::-1])

    def shape(self, t: MemRefType, operands) -> tuple[Lin, ...]:
        it = iter(operands)
        return tuple(self.val[next(it)] if d == loop.DYN else Lin(d) for d in t.get_shape())

    # -- the walk ---------------------------------------------------------------------------------
    def run(self) -> Graph:
        g = self.g
        block = self.main.body.block
        if len(block.args) != len(g.args):
            raise Unsupported(f"@main takes {len(block.args)} arguments, {len(g.args)} specs given")
        for i, (a, spec) in enumerate(zip(block.args, g.args)):
            if isinstance(a.type, MemRefType):
                if spec.kind != "tensor" or len(spec.sizes) != len(a.type.get_shape()):
                    raise Unsupported(
                        f"argument {i} ({spec.name}) is a rank-{len(a.type.get_shape())} buffer, spec {spec}"
                    )
                g.roots.append(Root("input", g.new_cell(), arg=i))
        for i, (a, spec) in enumerate(zip(block.args, g.args)):
            if isinstance(a.type, MemRefType):
                r = next(k for k, root in enumerate(g.roots) if root.arg == i)
                sizes = tuple(self.quantity(s, ("size", i, d)) for d, s in enumerate(spec.sizes))
                strides = tuple(self.quantity(s, ("stride", i, d)) for d, s in enumerate(spec.strides))
                self.val[a] = Buf(r, a.type.get_element_type(), sizes, strides, Lin(0))
            elif isinstance(a.type, IndexType):
                self.val[a] = self.quantity(spec.value, ("index", i)) if spec.value is not None else None
        for op in block.ops:
            self.visit(op)
        return g

    def visit(self, op) -> None:
        g = self.g
        if isinstance(op, memory.ArenaOp):
            g.roots.append(Root("arena", g.new_cell(), nbytes=op.result.type.get_shape()[0]))
            self.val[op.result] = len(g.roots) - 1
        elif isinstance(op, memory.SlotOp):
            t = op.result.type
            size = torch_dtype(t.get_element_type()).itemsize
            off = op.offset.value.data
            if off % size:
                raise Unsupported("slot offset not a multiple of its element size")
            sizes = tuple(Lin(d) for d in t.get_shape())
            self.val[op.result] = Buf(
                self.val[op.arena], t.get_element_type(), sizes, tuple(row_major(sizes)), Lin(off // size)
            )
        elif isinstance(op, memory.AllocOp):
            t = op.result.type
            sizes = self.shape(t, op.sizes)
            r = len(g.roots)
            buf = Buf(r, t.get_element_type(), sizes, self.strides_of(sizes), Lin(0))
            g.roots.append(Root("alloc", g.new_cell(), buf=buf))
            g.steps.append(Step("alloc", root=r))
            self.val[op.result] = buf
        elif isinstance(op, memory.DimOp):
            self.val[op.result] = self.val[op.source].sizes[op.dim.value.data]
        elif isinstance(op, memory.ViewOp):
            self.val[op.result] = self.view(op)
        elif isinstance(op, memory.ReshapeOp):
            src = self.val[op.source]
            sizes = self.shape(op.result.type, op.sizes)
            self.val[op.result] = Buf(src.root, src.elem, sizes, self.strides_of(sizes), src.offset)
        elif isinstance(op, memory.LaunchOp):
            name = op.callee.root_reference.data
            if name not in g.kernels:
                raise Unsupported(f"launch of {name}, which holds no loop.nest")
            ins, outs, syms = ([self.val[v] for v in vs] for vs in (op.ins, op.outs, op.symbols))
            g.steps.append(Step("launch", op, ins, outs, syms))
        elif isinstance(op, memory.ExternOp):
            self.extern(op)
        elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, IndexType):
            self.val[op.result] = Lin(op.value.value.data)
        elif type(op) in _INDEX_OPS:
            a, b = (self.val[o] for o in op.operands)
            self.val[op.result] = _INDEX_OPS[type(op)](self, a, b)
        elif isinstance(op, func.ReturnOp):
            g.returns = [self.val[v] for v in op.operands]
        else:
            raise Unsupported(f"{op.name} in @main")

    def view(self, op: memory.ViewOp) -> Buf:
        src = self.val[op.source]
        coeffs = loop.linear_coefficients(op.map.data)
        rank = op.map.data.num_dims
        strides = []
        for d in range(rank):
            s = Lin(0)
            for (c, _), st in zip(coeffs, src.strides):
                s = s + st * c[d] if c[d] else s
            strides.append(s)
        offset = src.offset
        for (_, k), st in zip(coeffs, src.strides):
            offset = offset + st * k if k else offset
        return Buf(src.root, src.elem, self.shape(op.result.type, op.sizes), tuple(strides), offset)

    def extern(self, op: memory.ExternOp) -> None:
        g = self.g
        ins = [self.val[v] for v in op.ins]
        step = Step("extern", op, ins, [self.val[v] for v in op.outs])
        for r in op.res:
            t = r.type
            cells = [g.new_cell() if d == loop.DYN else None for d in t.get_shape()]
            sizes = tuple(Lin.cell(c) if c is not None else Lin(d) for c, d in zip(cells, t.get_shape()))
            root = len(g.roots)
            g.roots.append(Root("extern", g.new_cell()))
            step.results.append((root, cells))
            self.val[r] = (root, sizes)
        g.steps.append(step)
        for r in op.res:  # strides after the step: products of the sizes the extern produced
            root, sizes = self.val[r]
            buf = Buf(root, r.type.get_element_type(), sizes, self.strides_of(sizes), Lin(0))
            g.roots[root].buf = buf
            self.val[r] = buf


def _nonlinear(fn):
    def make(p: Planner, a: Lin, b: Lin) -> Lin:
        if a.static and b.static:
            return Lin(fn(a.const, b.const))
        return p.derive(fn, a, b)

    return make


def _floordiv(x, y):
    return x // y if y else 0


_INDEX_OPS = {
    arith.AddiOp: lambda p, a, b: a + b,
    arith.SubiOp: lambda p, a, b: a - b,
    arith.MuliOp: lambda p, a, b: p.product(a, b),
    arith.FloorDivSIOp: _nonlinear(_floordiv),
    arith.DivSIOp: _nonlinear(lambda x, y: int(x / y) if y else 0),
    arith.CeilDivSIOp: _nonlinear(lambda x, y: -(-x // y) if y else 0),
    arith.RemSIOp: _nonlinear(lambda x, y: x - y * int(x / y) if y else 0),
    arith.MaxSIOp: _nonlinear(max),
    arith.MinSIOp: _nonlinear(min),
}


def write_in_place(g: Graph) -> list[int]:
    """Each result the runtime writes into an input (ArgSpec.written_from: an optimizer's parameters and states)
    computed in that input's own memory where that is safe, so the call neither allocates it nor copies it:
    the result is a whole buffer of the graph with the input's static sizes, strides and dtype; one launch
    writes it, pointwise (every point of its space once, no reduction), and reads the input, if at all, only at
    the point it writes; and no step after that launch reads the input. Returns the inputs so written."""
    done = []
    for i, spec in enumerate(g.args):
        k = spec.written_from
        out = g.returns[k] if k is not None and k < len(g.returns) else None
        if not isinstance(out, Buf) or g.roots[out.root].kind != "alloc" or g.roots[out.root].buf is not out:
            continue
        inp = next((r for r, root in enumerate(g.roots) if root.kind == "input" and root.arg == i), None)
        if inp is None or out.dtype != spec.dtype or not all(q.static for q in out.sizes + out.strides):
            continue
        if tuple(q.const for q in out.sizes) != tuple(spec.sizes) or tuple(q.const for q in out.strides) != tuple(
            spec.strides
        ):
            continue
        touch = [
            t
            for t, st in enumerate(g.steps)
            if any(isinstance(b, Buf) and b.root == out.root for b in st.ins + st.outs)
        ]
        if (
            not touch
            or g.steps[touch[0]].kind != "launch"
            or not any(b.root == out.root for b in g.steps[touch[0]].outs)
        ):
            continue
        w = touch[0]
        if any(isinstance(b, Buf) and b.root == inp for st in g.steps[w + 1 :] for b in st.ins + st.outs):
            continue
        if not _pointwise_over(g, g.steps[w], inp, out):
            continue
        _rebind(g, out.root, inp)
        g.roots[inp].buf = g.returns[k]  # the result is the whole input: a call returns the argument itself
        done.append(i)
    return done


def _pointwise_over(g: Graph, st: Step, inp: int, out: Buf) -> bool:
    """The launch writes `out` whole at each point of its all-parallel space and reads root `inp` only through
    buffers laid out as `out`, at that same point (identity maps)."""
    nest = g.kernels[st.op.callee.root_reference.data]
    params, bufs = list(nest.parent_block().args), st.ins + st.outs
    if len(params) != len(bufs) or nest.reduction_dims() or not isinstance(nest.space.data, AffineMap):
        return False
    space = [e.value if isinstance(e, AffineConstantExpr) else None for e in nest.extents]
    writes = [j for j, b in enumerate(bufs) if isinstance(b, Buf) and b.root == out.root]
    if writes != [len(st.ins) + st.outs.index(out)] or list(params[writes[0]].type.get_shape()) != space:
        return False
    same = lambda b: [q.const if q.static else None for q in (*b.sizes, *b.strides, b.offset)]  # noqa: E731
    for j, b in enumerate(bufs):
        if not isinstance(b, Buf) or b.root != inp:
            continue
        if j >= len(st.ins) or same(b) != same(out):
            return False
        for use in params[j].uses:
            ld = use.operation
            if not isinstance(ld, loop.LoadOp) or ld.indices or not _identity(ld.map.data, nest.rank):
                return False
    return True


def _identity(m: AffineMap, rank: int) -> bool:
    return len(m.results) == rank and all(
        isinstance(e, AffineDimExpr) and e.position == d for d, e in enumerate(m.results)
    )


def _rebind(g: Graph, old: int, new: int) -> None:
    """Every buffer of root `old` becomes the same buffer of root `new`; `old` is no longer allocated."""

    def move(x):
        return replace(x, root=new) if isinstance(x, Buf) and x.root == old else x

    g.steps = [st for st in g.steps if not (st.kind == "alloc" and st.root == old)]
    for st in g.steps:
        st.ins, st.outs = [move(x) for x in st.ins], [move(x) for x in st.outs]
    g.returns = [move(x) for x in g.returns]


def plan_graph(module: ModuleOp, args: list[ArgSpec], entry: str = "main") -> Graph:
    """Raises Unsupported when @main holds something the CPU runtime does not run."""
    g = Planner(module, args, entry).run()
    g.in_place = write_in_place(g)
    return g


__all__ = ["Buf", "Graph", "Root", "Step", "plan_graph"]
