"""The kernel emitter: one buffer-form `loop.nest`, specialised for a launch, as an LLVM function

    void kernel(i64 start, i64 end, i64** argv)      # *argv[k]: root address or index value k

The pointers, sizes, strides and symbols a kernel needs at run time come through one argv of cell
addresses rather than as separate arguments: any number of buffers fits, a call writes each runtime
value once into its frame cell and no launch repacks anything, and launches whose specialisations
agree share one function. Everything static (shapes, strides, offsets, symbols of a static graph) is
a constant in the code instead.

Its work is a range of items (`kernel_par`, parallel.outline, splits them across torch's OpenMP
threads): an item is one point of the outer parallel dims (and, when the innermost dim is parallel,
one chunk of it); a tile (tiles.py: the defaults picked there, or max-autotune's sizes) makes it a block of rows
of one outer dim by columns of the innermost one. Let v be the innermost dim whose extent is not a static 1. When
v is parallel ("mode B"), each item runs v in vectors of `lanes` elements (the host's native width) and one
masked vector for the rest, and each point of v computes every reduction over the reduction dims in vector lanes
(no horizontal step). When v is a reduction dim ("mode A", rows), each item is one row: every loop.reduce is one
pass over the reduction dims with a vector accumulator (the masked last vector adds the identity in its unused
lanes), combined horizontally at the end of the pass; later passes (softmax's sum after its max) see earlier
results as uniform scalars; full outputs that read a reduction's value take a last pass, the others are stored
in the first reduction's pass (in both modes). Extents below tuning.MIN_LANES_EXTENT run as scalars.

Loads whose address moves by one element per lane are vector loads, by zero a scalar load, by another stride a
gather. A load the bounds analysis (affine.interval) cannot prove in bounds is guarded: its indices are clamped
into the buffer (the dialect leaves such values unspecified; only a discarded select arm reads them), so
generated code never touches memory outside its buffers. Stores go to contiguous outputs whose sizes are proven
to match the space (else Unsupported).

The emitter keeps the passes (the items, each reduction's pass over the reduction dims, the outputs' stores) and
hands the rest to its parts, each with its own module:

    space       Space       what the nest is for this launch: dims, mode, width, tile, guards (facts, no code)
    frame       Frame       the function, its entry block's argv cells, runtime values, loops
    body        Body        the body's ops at a point (op table, uniform values, branching selects)
    access      Access      loads and stores
    prefetch    Prefetch    software prefetches of loads and stores
    streams     Streams     non-temporal stores of large outputs, and the items emitted for them
    transposes  Transposes  transposed reads in registers, by blocks of L x L
"""

from __future__ import annotations

from llvmlite import ir

from irc.dialects import loop

from ..runtime import parallel
from . import reduce as red
from . import tuning
from .access import Access, BufSpec
from .body import Body
from .frame import Frame
from .ivals import Lanes, add, cdiv, fill, imin, ival, mul, set_at, splat, udiv, urem
from .prefetch import Prefetch
from .space import Space
from .stash import stashes
from .stream import Streams
from .tiles import DEFAULT_TILE, Tile
from .transpose import Transposes
from .vec import I64


class KernelEmitter:
    def __init__(self, module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int, tile: Tile = DEFAULT_TILE):
        self.space = space = Space(nest, params, lanes, tile)
        self.frame = frame = Frame(module, name, space)
        self.streams = Streams(space, frame)
        # a gather's index at the step ahead: the body's ops that compute it, emitted again there
        self.prefetch = Prefetch(space, frame, lambda b, dims, roots: self.body.evaluate(b, None, dims, {}, roots))
        self.access = Access(space, frame, self.prefetch, self.streams)
        self.body = Body(space, frame, self.access)
        self.transposes = Transposes(space, frame, self.columns, self.region)

    def rloops(self, b, dims, width, inner, k=0, partial=None):
        """Loops over the reduction dims at the current point; inner(b, dims, width) at each innermost point. With
        `partial` (a float sum's: red.Accumulator.block), each loop runs in blocks of at most tuning.CASCADE steps,
        each block as partial(b, run)."""
        s, f = self.space, self.frame
        if k == len(s.R):
            return inner(b, dims, width)
        d, n = s.R[k], f.extent(s.R[k])

        def at(b, i, w=width):
            return self.rloops(b, set_at(dims, d, i), w, inner, k + 1, partial)

        lanes = s.mode == "A" and d == s.v
        steps = tuning.CASCADE * (s.L or 1) if lanes else tuning.CASCADE  # elements one lane adds in a block
        if lanes:
            run = lambda b, lo, hi: f.lanes_loop(b, lo, hi, at, s.narrow)
        else:
            run = lambda b, lo, hi: f.loop(b, lo, hi, 1, at)
        if partial is None:
            return run(b, 0, n)
        if isinstance(n, int) and n <= steps:
            return partial(b, lambda b: run(b, 0, n))
        f.loop(b, 0, n, steps, lambda b, lo: partial(b, lambda b: run(b, lo, imin(b, add(b, lo, steps), n))))

    def reduction(self, b, r: loop.ReduceOp, dims, width, env, stores=(), stash=None, reads=()):
        """r's value at the point `dims`: one pass over the reduction dims. `stores`: full outputs that read no
        reduction's value, stored in the same pass at each point (no second pass computing them again); `stash`:
        (output i, value) to store there for the later passes, `reads` those earlier passes stored (stash.py)."""
        s, store = self.space, self.access.store
        kind, t = r.kind.data.value, r.input.type
        arg = kind in ("argmax", "argmin")
        # rows (mode A) run in vectors of L lanes, each holding other points of the reduction
        acc = red.Accumulator(self.frame.entry, b, kind, t, s.L if s.mode == "A" and s.L else width)

        def inner(b, d, w):
            roots = [r.input, *(s.yields[i] for i in stores)]
            vals = self.body.evaluate(b, w, d, self.read_back(b, env, reads, d, w), roots)
            for i in stores:
                store(b, i, vals[s.yields[i]], d, w)
            if stash is not None:
                store(b, stash[0], vals[stash[1]], d, w)
            x = vals[r.input]
            if w:
                x = splat(b, x, w)
                lanes = d[s.v] if s.v is not None else None
                if isinstance(lanes, Lanes) and lanes.mask is not None and s.mode == "A":
                    x = b.select(lanes.mask, x, red.const(x.type, red.identity(kind, t), t))
            slot, pos = acc.lanes(b, acc.slot, w), acc.lanes(b, acc.pos, w)  # a narrow step: the first w lanes
            now = b.load(slot)
            if not arg:
                return b.store(red.combine(b, kind, t, now, x), slot)
            p = self.frame.dimval(b, d[s.R[0]], w) if s.R else ir.Constant(I64, 0)
            p = splat(b, ival(p), w) if w else ival(p)
            best = b.load(pos)
            take = red.better(b, kind, t, x, now, p, best, False)
            b.store(b.select(take, x, now), slot)
            b.store(b.select(take, p, best), pos)

        self.rloops(b, dims, width, inner, partial=acc.block if red.cascades(kind, t) else None)
        value, pos = b.load(acc.slot), (b.load(acc.pos) if acc.pos is not None else None)
        if s.mode == "A" and s.L:  # lanes held different points of the reduction: combine them
            value, pos = red.horizontal(b, kind, t, value, pos)
        return pos if arg else value

    def read_back(self, b, env, reads, d, w) -> dict:
        """env with what earlier reductions' passes left in the outputs (stash.py), read back, not computed again."""
        local = dict(env)
        for i, v in reads:
            local[v] = self.access.load_out(b, i, d, w)
        return local

    def region(self, b, dims, width, env=None):
        """Every reduction, then the outputs, at one point of the non-reduction dims (`env`: values already known)."""
        s, store = self.space, self.access.store
        env = dict(env or {})
        kinds = [s.nest.output_kind(i) if s.nest.reduction_dims() else "full" for i in range(len(s.yields))]
        now = [i for i, k in enumerate(kinds) if k == "reduced" or not s.R]
        later = [i for i in range(len(s.yields)) if i not in now]
        # full outputs that read no reduction's value go out in the first reduction's pass, rather than computed
        # again in a pass of their own over the same rows (a bias gradient fused with gelu's backward)
        early = [i for i in later if s.yields[i].owner not in s.after_reduce] if s.reduces else []
        later = [i for i in later if i not in early]
        stash = stashes(s.nest, s.reduces, s.yields, s.opset, later)
        for k, r in enumerate(s.reduces):
            reads = [stash[j] for j in stash if j < k]
            self.prefetch.first_pass = k == 0  # the pass that reads the row from memory
            env[r.result] = self.reduction(b, r, dims, width, env, early if k == 0 else (), stash.get(k), reads)
        self.prefetch.first_pass = False
        vals = self.body.evaluate(b, width, dims, env, [s.yields[i] for i in now])
        for i in now:
            store(b, i, vals[s.yields[i]], fill(dims, s.R), width)

        def full(b, d, w):
            known = self.read_back(b, env, stash.values(), d, w)
            vals = self.body.evaluate(b, w, d, known, [s.yields[i] for i in later])
            for i in later:
                store(b, i, vals[s.yields[i]], d, w)

        if later:
            self.rloops(b, dims, width, full)

    def columns(self, b, dims, lo, hi) -> None:
        """One row over columns [lo, hi) of the innermost dim."""
        v = self.space.v
        self.frame.lanes_loop(b, lo, hi, lambda b, i, w: self.region(b, set_at(dims, v, i), w))

    def chunk(self, b, c) -> tuple:
        """[lo, hi) of column chunk c along the innermost dim."""
        cols = self.space.tile.cols
        lo = mul(b, c, cols)
        return lo, imin(b, add(b, lo, cols), self.frame.extent(self.space.v))

    def emit(self) -> None:
        s, f = self.space, self.frame
        b = ir.IRBuilder(f.fn.append_basic_block("items"))
        start, end = f.fn.args[0], f.fn.args[1]
        dims = [0] * s.nest.rank
        rows, cols = s.tile
        nch = cdiv(f.entry, f.extent(s.v), cols) if cols else 1
        blocked = s.blocked  # the outer dim an item covers `rows` points of
        nblk = cdiv(f.entry, f.extent(blocked), rows) if blocked is not None else None

        def point(b, dims, c):
            if not cols:
                return self.region(b, list(dims), None)
            self.columns(b, dims, *self.chunk(b, c))

        # an item number's digits, fastest first: the column chunk, then the outer dims innermost first
        outer = [(d, nblk if d == blocked else f.extent(d)) for d in reversed(s.outer)]
        digits = ([("chunk", nch)] if cols else []) + outer
        digits = [(k, e) for k, e in digits if not (isinstance(e, int) and e == 1)]
        # Runtime extents: a division per digit per item costs more than a small item (a short row), so the digits
        # are counters, split from `start` once and stepped with a carry per item.
        slots = [f.entry.alloca(I64) for _ in digits] if any(not isinstance(e, int) for _, e in digits) else None
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
            for d in s.outer:
                dims[d] = at.get(d, 0)
            if blocked is None:
                point(b, dims, c)
            else:
                lo = mul(b, dims[blocked], rows)
                hi = imin(b, add(b, lo, rows), f.extent(blocked))
                if self.transposes.loads:  # transposed reads in registers (transpose.py)
                    self.transposes.rows(b, dims, lo, hi, self.chunk(b, c))
                else:
                    f.loop(b, lo, hi, 1, lambda b, r: point(b, set_at(dims, blocked, r), c))
            if slots:  # the next item's digits
                carry = ir.Constant(ir.IntType(1), 1)
                for slot, v, (_, e) in zip(slots, now, digits):
                    nv = b.add(v, b.zext(carry, I64))
                    carry = b.icmp_unsigned("==", nv, ival(e))
                    b.store(b.select(carry, ir.Constant(I64, 0), nv), slot)

        self.streams.items(b, start, end, item)
        b.ret_void()
        f.entry.branch(f.fn.blocks[1])

    def plan(self) -> dict:
        """What the runtime needs: items per launch, work per item (for the parallel threshold)."""
        s = self.space
        extents = s.nest.extents
        return {
            "outer": [extents[d] for d in s.outer],
            "chunk": extents[s.v] if s.tile.cols else None,
            "rows": s.tile.rows,
            "cols": s.tile.cols,
            "blocked": None if s.blocked is None else s.outer.index(s.blocked),
            "inner": [extents[d] for d in s.R],
            "guarded": sum(any(g) for g in s.guards.values()),
            "mode": s.mode,
            "lanes": s.L or 1,
            "streamed": len(self.streams.outputs),
        }


def emit_kernel(module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int, tile: Tile = DEFAULT_TILE) -> dict:
    """Add `name` to `module`, and `name_par` that runs it on torch's OpenMP threads where torch has them
    (parallel.outline); returns the launch plan (see KernelEmitter.plan). Raises Unsupported."""
    k = KernelEmitter(module, name, nest, params, lanes, tile)
    k.emit()
    if parallel.runtime() is not None:
        parallel.outline(module, k.frame.fn)
    return k.plan()


__all__ = ["BufSpec", "KernelEmitter", "emit_kernel"]
