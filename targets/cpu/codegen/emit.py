"""The kernel emitter: one buffer-form `loop.nest`, specialised for a launch, as an LLVM function

    void kernel(i64 start, i64 end, i64** argv)      # *argv[k]: root address or index value k

The pointers, sizes, strides and symbols a kernel needs at run time come through one argv of cell
addresses rather than as separate arguments: any number of buffers fits, a call writes each runtime
value once into its frame cell and no launch repacks anything, and launches whose specialisations
agree share one function. Everything static (shapes, strides, offsets, symbols of a static graph) is
a constant in the code instead.

Its work is a range of items (`kernel_par`, parallel.outline, splits them across torch's OpenMP
threads): an item is one point of the outer parallel dims (and, when the innermost dim is parallel,
one chunk of it); a tile (tiles.py: the defaults picked there, or max-autotune's sizes) makes it a block of rows of one outer
dim by columns of the innermost one. Let v be the innermost dim whose extent is not a static 1. When v is parallel ("mode B"), each item runs v in
vectors of `lanes` elements (the host's native width) and one masked vector for the rest, and each
point of v computes every reduction over the reduction dims in vector lanes (no horizontal step).
When v is a reduction dim ("mode A", rows), each item is one row: every loop.reduce is one pass over
the reduction dims with a vector accumulator (the masked last vector adds the identity in its
unused lanes), combined horizontally at the end of the pass; later passes (softmax's sum after its
max) see earlier results as uniform scalars; full outputs that read a reduction's value take a last pass,
the others are stored in the first reduction's pass (in both modes). Extents below
tuning.MIN_LANES_EXTENT run as scalars.

A body value is a scalar (uniform across the lanes) or a vector; an op with mixed operands broadcasts
the scalars. Loads whose address moves by one element per lane are vector loads, by zero a scalar
load, by another stride a gather. A load the bounds analysis (affine.interval) cannot prove in bounds
is guarded: its indices are clamped into the buffer (the dialect leaves such values unspecified; only
a discarded select arm reads them), so generated code never touches memory outside its buffers.
Stores go to contiguous outputs whose sizes are proven to match the space (else Unsupported).
"""

from __future__ import annotations

from llvmlite import ir

from irc.dialects import loop
from irc.ir.index_math import evaluate

from ..runtime import jit, parallel
from . import reduce as red
from . import tuning
from .access import Access, BufSpec
from .affine import Lin, interval, to_lin, uses_dim, within
from .branches import Branches, branching_selects
from .index_ir import IndexIR
from .ivals import (
    Lanes,
    add,
    cdiv,
    count,
    fill,
    imin,
    ival,
    mul,
    sdiv,
    set_at,
    splat,
    udiv,
    urem,
)
from .ops import EMIT, Cx
from .stash import stashes
from .stream import Streams
from .tiles import DEFAULT_TILE, Tile, choose_tile
from .transpose import Transposes
from .types import Unsupported
from .vec import I64

VOID = ir.VoidType()
ARGV = I64.as_pointer().as_pointer()


class KernelEmitter(Access, Branches, Streams, Transposes):
    def __init__(self, module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int, tile: Tile = DEFAULT_TILE):
        self.nest, self.params = nest, list(params)
        self.args = list(nest.parent_block().args)
        self.fn = ir.Function(module, ir.FunctionType(VOID, [I64, I64, ARGV]), name)
        self.fn.args[2].add_attribute("noalias")
        self.entry = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.cells: dict[int, ir.Value] = {}
        self.ops = [op for op in nest.body.block.ops if not isinstance(op, loop.YieldOp)]
        self.opset = set(self.ops)
        self.branching = branching_selects(self.ops)
        self.yields = list(nest.yield_op.values)
        self.reduces = [op for op in self.ops if isinstance(op, loop.ReduceOp)]
        self.first_pass = False
        self.after_reduce: set = set()  # the body's ops that read a reduction's value, directly or through others
        for op in self.ops:
            if isinstance(op, loop.ReduceOp) or any(o.owner in self.after_reduce for o in op.operands):
                self.after_reduce.add(op)
        self.syms = [self.param(s) for s in nest.symbols]
        self.sym_lins = [params[self.args.index(s)] for s in nest.symbols]
        self.ext_lin = [to_lin(e, self.sym_lins) for e in nest.extents]
        self.ext_static = [q.const if q is not None and q.static else None for q in self.ext_lin]
        self.R = [d for d in nest.reduction_dims() if self.ext_static[d] != 1]
        live = [d for d in range(nest.rank) if self.ext_static[d] != 1]
        self.v = live[-1] if live else None
        self.mode = "A" if self.v is not None and self.v in self.R else "B"
        small = self.v is not None and self.ext_static[self.v] is not None and self.ext_static[self.v] < tuning.MIN_LANES_EXTENT
        self.L = None if self.v is None or small or lanes < 2 else lanes
        # a row wider than the host's vector (default_lanes: up to 4x for reductions) steps at L, then at the native
        # width, then one masked native vector: a runtime row of 32 floats took one masked 64-lane vector
        native = jit.host().lanes(32)
        self.narrow = native if self.mode == "A" and self.L and native < self.L else None
        self.outer = [d for d in nest.parallel_dims() if self.ext_static[d] != 1 and not (self.mode == "B" and d == self.v)]
        self.tile, self.blocked = choose_tile(self, tile)
        # every vector of a lanes loop starts at a multiple of the width: a row's from 0, an item's from a multiple of cols
        self.aligned = self.L is not None and (self.mode == "A" or bool(self.tile.cols) and self.tile.cols % self.L == 0)
        # elements one step reads contiguously along v: a row, or an item's columns (None: known at run time)
        self.run = self.ext_static[self.v] if self.v is not None else 1
        if self.mode == "B" and self.tile.cols:
            self.run = min(self.run or self.tile.cols, self.tile.cols)
        self.guards = {op: self._guards(op) for op in self.ops if isinstance(op, loop.LoadOp)}
        self.out_dims = [self._out_dims(i) for i in range(len(self.yields))]
        self.streamed = self.streamed_outputs()

    # -- argv, extents, bounds --------------------------------------------------------------------
    def cell(self, k: int):
        if k not in self.cells:
            b = self.entry
            self.cells[k] = b.load(b.load(b.gep(self.fn.args[2], [ir.Constant(I64, k)])))
        return self.cells[k]

    def lin(self, q: Lin):
        if q.static:
            return q.const
        acc = q.const
        for c, k in q.terms:
            acc = add(self.entry, acc, mul(self.entry, self.cell(c), k))
        return acc

    def param(self, arg):
        spec = self.params[self.args.index(arg)]
        return self.lin(spec) if isinstance(spec, Lin) else spec

    def extent(self, d: int):
        return self.lin(self.ext_lin[d]) if self.ext_lin[d] is not None else self.aff(self.entry, self.nest.extents[d], [], None)

    def _guards(self, op: loop.LoadOp) -> list[bool]:
        spec = self.params[self.args.index(op.source)]
        exts = [q for q in self.ext_lin] + [None] * len(op.indices)
        return [not within(interval(e, exts, self.sym_lins), size) for e, size in zip(op.map.data.results, spec.sizes)]

    def _out_dims(self, i: int) -> list[int | None]:
        """For each dim of output i, the space dim it holds (None for a size-1 dim); sizes proven to match."""
        nest = self.nest
        reduced = nest.output_kind(i) == "reduced"
        space = nest.space_shape(reduced)
        spec = self.params[self.args.index(nest.outs[i])]
        inner = iter(d for d, n in enumerate(space) if n != 1)
        out = [None if n == 1 else next(inner) for n in nest.output_types()[i].get_shape()]
        for d, size in zip(out, spec.sizes):
            if d is not None and (self.ext_lin[d] is None or not within((Lin(0), self.ext_lin[d] - 1), size)):
                raise Unsupported(f"output {i} is not provably the size of the space")
        return out

    # -- index arithmetic: ints fold, scalars and vectors broadcast ------------------------------
    def dimval(self, b, x, width):
        if isinstance(x, Lanes):
            iota = ir.Constant(ir.VectorType(I64, width), list(range(width)))
            return b.add(splat(b, ival(x.base), width), iota)
        return x

    def aff(self, b, e, dims, width, extra=()):
        def dim(i):
            return self.dimval(b, dims[i], width) if i < len(dims) else extra[i - len(dims)]

        return evaluate(e, IndexIR(b, dim, self.syms))

    # -- the body ---------------------------------------------------------------------------------
    def evaluate(self, b, width, dims, env, roots) -> dict:
        need, stack = set(), [r for r in roots if r not in env]
        while stack:
            op = stack.pop().owner
            if op in need:
                continue
            if isinstance(op, loop.ReduceOp):
                raise Unsupported("a reduction result is used before it is computed")
            need.add(op)
            stack.extend(o for o in op.operands if o not in env and o.owner in self.opset)
        local = dict(env)
        self.emit_ops(b, [op for op in self.ops if op in need], dims, local, width)
        return local

    def emit_op(self, b, op, dims, env, width):
        if isinstance(op, loop.LoadOp):
            return self.load(b, op, dims, env, width)
        if (x := self.uniform(b, op, dims, env)) is not None:  # one value for the whole vector (branches.py)
            return x
        if isinstance(op, loop.IndexOp):
            x = self.aff(b, op.map.data.results[0], dims, width)
            return ir.Constant(I64, x) if isinstance(x, int) else x
        fn = EMIT.get(type(op))
        if fn is None:
            raise Unsupported(f"no CPU emitter for {op.name}")
        args = [env[o] for o in op.operands]
        n = max((count(a) or 0 for a in args), default=0)
        if n:
            args = [splat(b, a, n) for a in args]
        return fn(Cx(b, n or None), op, *args)

    def loop(self, b, lo, hi, step, body):
        pre, head = b.block, self.fn.append_basic_block("head")
        inside, done = self.fn.append_basic_block("body"), self.fn.append_basic_block("exit")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(ival(lo), pre)
        b.cbranch(b.icmp_signed("<", i, ival(hi)), inside, done)
        b.position_at_end(inside)
        body(b, i)
        i.add_incoming(b.add(i, ir.Constant(I64, step)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def lanes_loop(self, b, lo, hi, body, narrow: int | None = None):
        """[lo, hi) in vectors of L (body(b, Lanes(i), L)), then, with `narrow`, in vectors of that many lanes, then
        the rest as one masked vector (or, without vectors, everything as scalars: body(b, i, None))."""
        if self.L is None:
            return self.loop(b, lo, hi, 1, lambda b, i: body(b, i, None))
        w = self.L
        vend = add(b, lo, mul(b, sdiv(b, add(b, hi, mul(b, lo, -1)), w), w))
        self.loop(b, lo, vend, w, lambda b, i: body(b, Lanes(i), self.L))
        if narrow:
            start, w = vend, narrow
            vend = add(b, start, mul(b, sdiv(b, add(b, hi, mul(b, start, -1)), w), w))
            if not (isinstance(vend, int) and isinstance(start, int) and vend <= start):
                self.loop(b, start, vend, w, lambda b, i: body(b, Lanes(i), w))
        rest = add(b, hi, mul(b, vend, -1))
        if isinstance(rest, int) and rest <= 0:
            return
        iota = ir.Constant(ir.VectorType(I64, w), list(range(w)))
        mask = b.icmp_signed("<", iota, splat(b, ival(rest), w))
        if isinstance(rest, int):
            return body(b, Lanes(vend, mask), w)
        with b.if_then(b.icmp_signed(">", ival(rest), ir.Constant(I64, 0))):
            body(b, Lanes(vend, mask), w)

    def rloops(self, b, dims, width, inner, k=0, partial=None):
        """Loops over the reduction dims at the current point; inner(b, dims, width) at each innermost point. With
        `partial` (a float sum's: red.Accumulator.block), each loop runs in blocks of at most tuning.CASCADE steps, each
        block as partial(b, run)."""
        if k == len(self.R):
            return inner(b, dims, width)
        d, n = self.R[k], self.extent(self.R[k])

        def at(b, i, w=width):
            return self.rloops(b, set_at(dims, d, i), w, inner, k + 1, partial)

        lanes = self.mode == "A" and d == self.v
        steps = tuning.CASCADE * (self.L or 1) if lanes else tuning.CASCADE  # elements one lane adds in a block
        run = (lambda b, lo, hi: self.lanes_loop(b, lo, hi, at, self.narrow)) if lanes else (lambda b, lo, hi: self.loop(b, lo, hi, 1, at))
        if partial is None:
            return run(b, 0, n)
        if isinstance(n, int) and n <= steps:
            return partial(b, lambda b: run(b, 0, n))
        self.loop(b, 0, n, steps, lambda b, lo: partial(b, lambda b: run(b, lo, imin(b, add(b, lo, steps), n))))

    def reduction(self, b, r: loop.ReduceOp, dims, width, env, stores=(), stash=None, reads=()):
        """r's value at the point `dims`: one pass over the reduction dims. `stores`: full outputs that read no
        reduction's value, stored in the same pass at each point (no second pass computing them again); `stash`:
        (output i, value) to store there for the later passes, `reads` those earlier passes stored (stash.py)."""
        kind, t = r.kind.data.value, r.input.type
        arg = kind in ("argmax", "argmin")
        # rows (mode A) run in vectors of L lanes, each holding other points of the reduction
        acc = red.Accumulator(self.entry, b, kind, t, self.L if self.mode == "A" and self.L else width)

        def inner(b, d, w):
            vals = self.evaluate(b, w, d, self.read_back(b, env, reads, d, w), [r.input, *(self.yields[i] for i in stores)])
            for i in stores:
                self.store(b, i, vals[self.yields[i]], d, w)
            if stash is not None:
                self.store(b, stash[0], vals[stash[1]], d, w)
            x = vals[r.input]
            if w:
                x = splat(b, x, w)
                lanes = d[self.v] if self.v is not None else None
                if isinstance(lanes, Lanes) and lanes.mask is not None and self.mode == "A":
                    x = b.select(lanes.mask, x, red.const(x.type, red.identity(kind, t), t))
            slot, pos = acc.lanes(b, acc.slot, w), acc.lanes(b, acc.pos, w)  # a narrow step: the first w lanes
            now = b.load(slot)
            if not arg:
                return b.store(red.combine(b, kind, t, now, x), slot)
            p = self.dimval(b, d[self.R[0]], w) if self.R else ir.Constant(I64, 0)
            p = splat(b, ival(p), w) if w else ival(p)
            best = b.load(pos)
            take = red.better(b, kind, t, x, now, p, best, False)
            b.store(b.select(take, x, now), slot)
            b.store(b.select(take, p, best), pos)

        self.rloops(b, dims, width, inner, partial=acc.block if red.cascades(kind, t) else None)
        value, pos = b.load(acc.slot), (b.load(acc.pos) if acc.pos is not None else None)
        if self.mode == "A" and self.L:  # lanes held different points of the reduction: combine them
            value, pos = red.horizontal(b, kind, t, value, pos)
        return pos if arg else value

    def read_back(self, b, env, reads, d, w) -> dict:
        """env with what earlier reductions' passes left in the outputs (stash.py), read back, not computed again."""
        local = dict(env)
        for i, v in reads:
            local[v] = self.load_out(b, i, d, w)
        return local

    def region(self, b, dims, width, env=None):
        """Every reduction, then the outputs, at one point of the non-reduction dims (`env`: values already known)."""
        env = dict(env or {})
        kinds = [self.nest.output_kind(i) if self.nest.reduction_dims() else "full" for i in range(len(self.yields))]
        now = [i for i, k in enumerate(kinds) if k == "reduced" or not self.R]
        later = [i for i in range(len(self.yields)) if i not in now]
        # full outputs that read no reduction's value go out in the first reduction's pass: a bias gradient fused with
        # gelu's backward computed gelu's backward twice, the second time in another pass over the same rows
        early = [i for i in later if self.yields[i].owner not in self.after_reduce] if self.reduces else []
        later = [i for i in later if i not in early]
        stash = stashes(self.nest, self.reduces, self.yields, self.opset, later)
        for k, r in enumerate(self.reduces):
            reads = [stash[j] for j in stash if j < k]
            self.first_pass = k == 0  # the pass that reads the row from memory (access.ITEMS_AHEAD)
            env[r.result] = self.reduction(b, r, dims, width, env, early if k == 0 else (), stash.get(k), reads)
        self.first_pass = False
        vals = self.evaluate(b, width, dims, env, [self.yields[i] for i in now])
        for i in now:
            self.store(b, i, vals[self.yields[i]], fill(dims, self.R), width)

        def full(b, d, w):
            vals = self.evaluate(b, w, d, self.read_back(b, env, stash.values(), d, w), [self.yields[i] for i in later])
            for i in later:
                self.store(b, i, vals[self.yields[i]], d, w)

        if later:
            self.rloops(b, dims, width, full)

    def chunk(self, b, c) -> tuple:
        """[lo, hi) of column chunk c along the innermost dim."""
        lo = mul(b, c, self.tile.cols)
        return lo, imin(b, add(b, lo, self.tile.cols), self.extent(self.v))

    def emit(self) -> None:
        b = ir.IRBuilder(self.fn.append_basic_block("items"))
        start, end = self.fn.args[0], self.fn.args[1]
        dims = [0] * self.nest.rank
        rows, cols = self.tile
        nch = cdiv(self.entry, self.extent(self.v), cols) if cols else 1
        blocked = self.blocked  # the outer dim an item covers `rows` points of
        nblk = cdiv(self.entry, self.extent(blocked), rows) if blocked is not None else None

        def point(b, dims, c):
            if not cols:
                return self.region(b, list(dims), None)
            self.columns(b, dims, *self.chunk(b, c))

        # an item number's digits, fastest first: the column chunk, then the outer dims innermost first
        digits = ([("chunk", nch)] if cols else []) + [(d, nblk if d == blocked else self.extent(d)) for d in reversed(self.outer)]
        digits = [(k, e) for k, e in digits if not (isinstance(e, int) and e == 1)]
        # Runtime extents: a division per digit per item costs more than a small item (dynamic-seq's rows of 32
        # floats), so the digits are counters, split from `start` once and stepped with a carry per item.
        slots = [self.entry.alloca(I64) for _ in digits] if any(not isinstance(e, int) for _, e in digits) else None
        if slots:
            rem = start
            for slot, (_, e) in zip(slots, digits):
                b.store(ival(urem(b, rem, e)), slot)
                rem = udiv(b, rem, e)

        def item(b, it):
            if slots:
                now = [b.load(slot) for slot in slots]
            else:  # static extents: dividing by constants is a multiply and a shift
                now, rem = [], it
                for _, e in digits:
                    now.append(urem(b, rem, e))
                    rem = udiv(b, rem, e)
            at = {k: v for (k, _), v in zip(digits, now)}
            c = at.get("chunk", 0) if cols else None
            for d in self.outer:
                dims[d] = at.get(d, 0)
            if blocked is None:
                point(b, dims, c)
            else:
                lo = mul(b, dims[blocked], rows)
                hi = imin(b, add(b, lo, rows), self.extent(blocked))
                if self.transposed_loads:  # transposed reads in registers (transpose.py)
                    self.transposed_rows(b, dims, lo, hi, c)
                else:
                    self.loop(b, lo, hi, 1, lambda b, r: point(b, set_at(dims, blocked, r), c))
            if slots:  # the next item's digits
                carry = ir.Constant(ir.IntType(1), 1)
                for slot, v, (_, e) in zip(slots, now, digits):
                    nv = b.add(v, b.zext(carry, I64))
                    carry = b.icmp_unsigned("==", nv, ival(e))
                    b.store(b.select(carry, ir.Constant(I64, 0), nv), slot)

        self.items(b, start, end, item)
        b.ret_void()
        self.entry.branch(self.fn.blocks[1])

    # what the runtime needs: items per launch, work per item (for the parallel threshold)
    def plan(self):
        return {"outer": [self.nest.extents[d] for d in self.outer],
                "chunk": self.nest.extents[self.v] if self.tile.cols else None, "rows": self.tile.rows, "cols": self.tile.cols,
                "blocked": None if self.blocked is None else self.outer.index(self.blocked),
                "inner": [self.nest.extents[d] for d in self.R], "guarded": sum(any(g) for g in self.guards.values()),
                "mode": self.mode, "lanes": self.L or 1, "streamed": len(self.streamed)}  # fmt: skip


def emit_kernel(module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int, tile: Tile = DEFAULT_TILE) -> dict:
    """Add `name` to `module`, and `name_par` that runs it on torch's OpenMP threads where torch has them
    (parallel.outline); returns the launch plan (see KernelEmitter.plan). Raises Unsupported."""
    k = KernelEmitter(module, name, nest, params, lanes, tile)
    k.emit()
    if parallel.runtime() is not None:
        parallel.outline(module, k.fn)
    return k.plan()


__all__ = ["BufSpec", "KernelEmitter", "emit_kernel", "Lanes", "uses_dim"]
