"""Loads and stores of the kernel emitter: addresses from a buffer's sizes, strides and offset; vector
loads where a lane moves one element, scalar loads (broadcast) where it moves none, gathers otherwise;
guarded loads clamp their indices into the buffer (and read a zero cell from an empty one)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from llvmlite import ir

from irc.dialects import loop
from irc.dialects.math_cost import costly_math

from . import tuning
from .affine import Lin, coefficient, lane_coefficient, uses_dim
from .ivals import (
    Lanes,
    abi_size,
    add,
    count,
    imin,
    ival,
    kconst,
    mangle_el,
    mul,
    same,
    set_at,
    splat,
)
from .stash import cone
from .types import narrow, storage_type, widen
from .vec import I1, I8, I32, I64


@dataclass(frozen=True)
class BufSpec:
    """A memref parameter as the launch passes it: element type, sizes, strides and offset (elements)."""

    elem: object
    sizes: tuple[Lin, ...]
    strides: tuple[Lin, ...]
    offset: Lin
    ptr: int  # argv index of the root address




def __getattr__(name: str):
    """The runtime's emission-record key (runtime/compiled.py) still reads the prefetch settings here; they live in
    tuning.py."""
    if name in ("PREFETCH", "PREFETCH_MIN_BYTES"):
        return getattr(tuning, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")




def _prefetch_lines(b, ptr, ahead: int, nbytes: int, write: bool) -> None:
    """One llvm.prefetch (never faults, even past a buffer's end) per cache line of the `nbytes` from `ahead` bytes
    past ptr."""
    fn = b.module.globals.get("llvm.prefetch.p0") or ir.Function(
        b.module, ir.FunctionType(ir.VoidType(), [I8.as_pointer(), I32, I32, I32]), "llvm.prefetch.p0")
    p8 = b.bitcast(ptr, I8.as_pointer())
    for line in range(0, max(nbytes, 1), tuning.CACHE_LINE):
        b.call(fn, [b.gep(p8, [ir.Constant(I64, ahead + line)]), ir.Constant(I32, int(write)), ir.Constant(I32, 3), ir.Constant(I32, 1)])


class Access:
    """Mixed into KernelEmitter (which provides params, args, guards, v, nest, entry, cells, lin, aff)."""

    # -- loads and stores -------------------------------------------------------------------------
    def base_ptr(self, spec: BufSpec):
        key = ("ptr", spec.ptr, str(storage_type(spec.elem)))
        if key not in self.cells:
            self.cells[key] = self.entry.inttoptr(self.cell(spec.ptr), storage_type(spec.elem).as_pointer())
        return self.cells[key]

    def load(self, b, op: loop.LoadOp, dims, env, width):
        spec = self.params[self.args.index(op.source)]
        guard = self.guards[op]
        extra = [env[i] for i in op.indices]
        exprs = op.map.data.results
        st, elem = storage_type(spec.elem), spec.elem
        lanes_in = width and self.v is not None and isinstance(dims[self.v], Lanes)
        mask = dims[self.v].mask if lanes_in else None
        vec_extra = any(count(x) for x in extra)
        coefs = [self.lane_step(e, width) for e in exprs] if lanes_in and not vec_extra else [None]
        if None not in coefs:
            scalar_dims = [x.base if isinstance(x, Lanes) else x for x in dims]
            step = 0
            for c, s in zip(coefs, spec.strides):
                step = add(b, step, mul(b, self.lin(s) if c else 0, c))
            if any(guard) and step == 1:  # the lanes inside the buffer: one masked load (not a gather of clamped indices),
                # or one branch where the test is the same for every lane
                flat = self.flat(b, spec, [self.aff(b, e, scalar_dims, None, extra) for e in exprs])
                vp = b.bitcast(b.gep(self.base_ptr(spec), [ival(flat)]), ir.VectorType(st, width).as_pointer())
                guarded = [e for e, g in zip(exprs, guard) if g], [n for n, g in zip(spec.sizes, guard) if g]
                if mask is None:
                    self.prefetch_ahead(b, op, spec, scalar_dims, extra, abi_size(st) * width)
                    if all(self.lane_step(e, width) == 0 for e in guarded[0]):  # one test for the whole vector
                        return widen(b, self.uniform_load(b, vp, self.inside(b, *guarded, scalar_dims, None, extra)), elem)
                inside = self.inside(b, *guarded, dims, width, extra)
                return widen(b, self.masked("load", b, vp, inside if mask is None else b.and_(inside, mask)), elem)
            if not any(guard):
                flat = self.flat(b, spec, [self.aff(b, e, scalar_dims, None, extra) for e in exprs])
                ptr = b.gep(self.base_ptr(spec), [ival(flat)])
                if step == 0:
                    return widen(b, b.load(ptr), elem)
                if step == 1:
                    vp = b.bitcast(ptr, ir.VectorType(st, width).as_pointer())
                    if mask is not None:
                        return widen(b, self.masked("load", b, vp, mask), elem)
                    self.prefetch(b, ptr, spec, abi_size(st), width)
                    self.prefetch_ahead(b, op, spec, scalar_dims, extra, abi_size(st) * width)
                    return widen(b, b.load(vp, align=max(1, abi_size(st))), elem)
                iota = ir.Constant(ir.VectorType(I64, width), list(range(width)))
                idx = b.add(splat(b, ival(flat), width), b.mul(splat(b, ival(step), width), iota))
                return widen(b, self.gather(b, self.base_ptr(spec), idx, st, mask), elem)
        w = width if lanes_in or vec_extra else None
        idx = []
        for e, size, g in zip(exprs, spec.sizes, guard):
            x = self.aff(b, e, dims, w, extra)
            idx.append(self.clamp(b, x, size) if g else x)
        flat = self.flat(b, spec, idx)
        base = self.base_ptr(spec)
        if any(guard):
            base = self.nonempty(b, base, spec)
        if count(flat) if not isinstance(flat, int) else False:
            return widen(b, self.gather(b, base, flat, st, mask), elem)
        return widen(b, b.load(b.gep(base, [ival(flat)])), elem)

    def lane_step(self, e, width: int) -> int | None:
        """How far index expression e moves per lane of the vector dim (None: not one constant step). Vectors of an
        aligned lanes loop start at multiples of the width, so views that split the vector dim (heads, stacked
        q/k/v) read whole vectors (affine.LaneCoefficient)."""
        return lane_coefficient(e, self.v, width) if self.aligned else coefficient(e, self.v)

    def inside(self, b, exprs, sizes, dims, width: int | None, extra):
        """<width x i1>: the lanes whose indices `exprs` lie inside `sizes` (the guarded dims of a load); with no
        width, one i1 for indices that do not move with the lane (`dims` then holds the vector's first point)."""
        ok = None
        for e, size in zip(exprs, sizes):
            x, hi = ival(self.aff(b, e, dims, width, extra)), ival(self.lin(size))
            if width:
                x, hi = splat(b, x, width), splat(b, hi, width)
            cond = b.and_(b.icmp_signed(">=", x, kconst(x, 0)), b.icmp_signed("<", x, hi))
            ok = cond if ok is None else b.and_(ok, cond)
        return ok

    def uniform_load(self, b, vp, inside):
        """A whole vector where `inside`, else zeros: a branch, not a masked load. LLVM joins the branch to the one a
        padded window's select takes on the same test, and the load in it is a plain one. A channels-last 8x64x112x112
        3x3 max pool, where masked loads read its windows: 4.7-6.4 ms -> 2.0 ms (eager 2.2 ms)."""
        vty = vp.type.pointee
        with b.if_else(inside) as (then, otherwise):
            with then:
                x, then_block = b.load(vp, align=max(1, abi_size(vty.element))), b.block
            with otherwise:
                otherwise_block = b.block
        phi = b.phi(vty)
        phi.add_incoming(x, then_block)
        phi.add_incoming(ir.Constant(vty, None), otherwise_block)
        return phi

    def prefetch(self, b, ptr, spec: BufSpec, elem_bytes: int, width: int = 1, write: bool = False):
        """Software prefetches PREFETCH bytes ahead of a streaming access of `spec` (never faults, even past the end),
        one per cache line the `width`-element step reads (a 4-vector step read 3 of its 4 lines unfetched: a
        4096x4096 row sum 0.78x -> 0.57x eager): long vector bodies leave the out-of-order window too few iterations
        to cover DRAM latency. Not where a step's contiguous run is shorter than twice that: the line fetched would
        mostly be another item's (a column sum's 256-column items: 20% slower with it); nor on a static buffer of at
        most PREFETCH_MIN_BYTES, which the caches hold."""
        if not tuning.PREFETCH or self.run is not None and self.run * elem_bytes < 2 * tuning.PREFETCH:
            return
        if self._in_cache(spec):
            return
        _prefetch_lines(b, ptr, tuning.PREFETCH, width * elem_bytes, write)

    @staticmethod
    def _in_cache(spec: BufSpec) -> bool:
        """A static buffer of at most PREFETCH_MIN_BYTES (a symbolic one may be any size)."""
        return all(n.static for n in spec.sizes) and math.prod(n.const for n in spec.sizes) * abi_size(
            storage_type(spec.elem)) <= tuning.PREFETCH_MIN_BYTES

    @cached_property
    def row_prefetch_dim(self) -> int | None:
        """The reduction dim whose rows ahead a column reduction prefetches (ROWS_AHEAD): the innermost one of a
        mode-B kernel whose body runs math functions; None elsewhere (a light body's out-of-order window reaches
        the next rows: a column sum of 8 MB ran 15% slower with it)."""
        if not tuning.PREFETCH or self.mode != "B" or not self.R or not any(costly_math(op) for op in self.ops):
            return None
        return self.R[-1]

    @cached_property
    def item_prefetch_dim(self) -> int | None:
        """The outer dim whose items ahead (ITEMS_AHEAD) the first pass of a rows kernel of several passes prefetches:
        the innermost outer dim of a mode-A kernel with two reductions or more (softmax, layer_norm); None elsewhere."""
        if not tuning.PREFETCH or self.mode != "A" or len(self.reduces) < 2 or not self.outer:
            return None
        return self.outer[-1]

    def load_prefetch_ahead(self) -> tuple[int, int] | None:
        """(dim, steps) along which the current pass's streaming loads also prefetch ahead: a column reduction's
        rows (row_prefetch_dim, ROWS_AHEAD), the first pass of a rows kernel's items (item_prefetch_dim,
        ITEMS_AHEAD); None elsewhere."""
        if self.row_prefetch_dim is not None:
            return self.row_prefetch_dim, tuning.ROWS_AHEAD
        if self.first_pass and self.item_prefetch_dim is not None:
            return self.item_prefetch_dim, tuning.ITEMS_AHEAD
        return None

    def prefetch_ahead(self, b, op: loop.LoadOp, spec: BufSpec, dims, extra, nbytes: int) -> None:
        """Where the pass prefetches ahead (load_prefetch_ahead), prefetch the `nbytes` this load reads that many steps
        on. A gather (an index loaded in the body: an embedding's row) needs its index there: the ops computing it
        run again at the step ahead, clamped into the dim so that the index's own load stays inside its buffer
        (the prefetch itself never faults, whatever row the index names)."""
        if (ahead := self.load_prefetch_ahead()) is None:
            return
        d, steps = ahead
        exprs = op.map.data.results
        if op.indices:
            if not self.first_pass or any(o in self.after_reduce for v in op.indices for o in cone(v, self.opset)):
                return  # a later pass (the rows are in cache by then), or an index from a reduction's value
            moved = set_at(dims, d, imin(b, add(b, dims[d], steps), add(b, self.extent(d), -1)))
            at = self.evaluate(b, None, moved, {}, list(op.indices))
            extra = [at[v] for v in op.indices]
        elif any(uses_dim(e, d) for e in exprs):
            moved = self.moved(b, dims, d, steps)
        else:
            return
        self.prefetch_rows(b, spec, [self.aff(b, e, moved, None, extra) for e in exprs], nbytes)

    @staticmethod
    def moved(b, dims, d: int, steps: int) -> list:
        """The step's scalar dims moved `steps` along dim d."""
        return set_at(dims, d, add(b, dims[d], steps))

    def prefetch_rows(self, b, spec: BufSpec, index, nbytes: int, write: bool = False):
        """Prefetch the `nbytes` of `spec` at `index` (an access's index at the dims moved ahead)."""
        _prefetch_lines(b, b.gep(self.base_ptr(spec), [ival(self.flat(b, spec, index))]), 0, nbytes, write)

    def flat(self, b, spec: BufSpec, idx):
        acc = self.lin(spec.offset)
        for x, s in zip(idx, spec.strides):
            acc = add(b, acc, mul(b, x, self.lin(s)))
        return acc

    def clamp(self, b, x, size: Lin):
        hi = add(b, self.lin(size), -1)
        if isinstance(x, int) and isinstance(hi, int):
            return min(max(x, 0), max(hi, 0))
        x, hi = same(b, ival(x) if isinstance(x, int) else x, hi)
        x = b.select(b.icmp_signed(">", x, hi), hi, x)
        return b.select(b.icmp_signed("<", x, kconst(x, 0)), kconst(x, 0), x)

    def nonempty(self, b, base, spec: BufSpec):
        """A guarded load from a buffer that may hold no element reads a zero cell instead."""
        if all(s.static and s.const > 0 for s in spec.sizes):
            return base
        ok = ir.Constant(I1, 1)
        for s in spec.sizes:
            if not (s.static and s.const > 0):
                ok = b.and_(ok, b.icmp_signed(">", ival(self.lin(s)), ir.Constant(I64, 0)))
        if "irc_zero" not in b.module.globals:
            g = ir.GlobalVariable(b.module, ir.ArrayType(I8, 64), "irc_zero")
            g.initializer, g.global_constant, g.linkage = ir.Constant(ir.ArrayType(I8, 64), None), True, "internal"
        zero = b.bitcast(b.module.globals["irc_zero"], base.type)
        return b.select(ok, base, zero)

    def masked(self, kind: str, b, vp, mask, value=None):
        """llvm.masked.load / llvm.masked.store through a vector pointer: lanes outside `mask` are not touched."""
        vty = vp.type.pointee
        align = ir.Constant(I32, max(1, abi_size(vty.element)))
        name = f"llvm.masked.{kind}.v{vty.count}{mangle_el(vty.element)}.p0"
        if kind == "load":
            fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(vty, [vp.type, I32, mask.type, vty]), name)
            return b.call(fn, [vp, align, mask, ir.Constant(vty, None)])
        fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(ir.VoidType(), [vty, vp.type, I32, mask.type]), name)
        return b.call(fn, [value, vp, align, mask])

    def gather(self, b, base, idx, st, mask=None):
        n = idx.type.count
        addr = b.add(splat(b, b.ptrtoint(base, I64), n), b.mul(idx, splat(b, ir.Constant(I64, abi_size(st)), n)))
        ptrs = b.inttoptr(addr, ir.VectorType(st.as_pointer(), n))
        vty = ir.VectorType(st, n)
        name = f"llvm.masked.gather.v{n}{mangle_el(st)}.v{n}p0"
        fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(vty, [ptrs.type, I32, ir.VectorType(I1, n), vty]), name)
        if mask is None:
            mask = ir.Constant(ir.VectorType(I1, n), [ir.Constant(I1, 1)] * n)
        align = ir.Constant(I32, max(1, abi_size(st)))
        return b.call(fn, [ptrs, align, mask, ir.Constant(vty, None)])

    def out_index(self, i: int, dims) -> list:
        return [0 if d is None else dims[d] for d in self.out_dims[i]]

    def out_ptr(self, b, i: int, dims):
        """Output i's address at the point `dims`, whether a lane moves along it, and the lanes' mask."""
        spec = self.params[self.args.index(self.nest.outs[i])]
        idx, lanes, mask = [], False, None
        for x in self.out_index(i, dims):
            if isinstance(x, Lanes):
                lanes, x, mask = True, x.base, x.mask
            idx.append(x)
        return spec, b.gep(self.base_ptr(spec), [ival(self.flat(b, spec, idx))]), lanes, mask

    def load_out(self, b, i: int, dims, width):
        """What `store` wrote to output i at the point `dims` (in its element type, which is the compute type)."""
        spec, ptr, lanes, mask = self.out_ptr(b, i, dims)
        if lanes and width:
            vp = b.bitcast(ptr, ir.VectorType(storage_type(spec.elem), width).as_pointer())
            if mask is not None:
                return self.masked("load", b, vp, mask)
            return b.load(vp, align=max(1, abi_size(storage_type(spec.elem))))
        return b.load(ptr)

    def store(self, b, i: int, value, dims, width):
        spec, ptr, lanes, mask = self.out_ptr(b, i, dims)
        if lanes and width:
            value = narrow(b, splat(b, value, width), spec.elem)
            vp = b.bitcast(ptr, value.type.as_pointer())
            if mask is not None:
                return self.masked("store", b, vp, mask, value)
            if (r := self.row_prefetch_dim) is not None and r in self.out_dims[i]:
                ahead = self.moved(b, [x.base if isinstance(x, Lanes) else x for x in dims], r, tuning.ROWS_AHEAD)
                self.prefetch_rows(b, spec, self.out_index(i, ahead), abi_size(value.type.element) * width, write=True)
            if not self.store_streamed(b, i, value, vp):  # stream.py
                b.store(value, vp, align=max(1, abi_size(value.type.element)))
        else:
            b.store(narrow(b, value, spec.elem), ptr)
