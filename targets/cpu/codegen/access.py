"""Loads and stores of the kernel emitter: addresses from a buffer's sizes, strides and offset; vector
loads where a lane moves one element, scalar loads (broadcast) where it moves none, gathers otherwise;
guarded loads clamp their indices into the buffer (and read a zero cell from an empty one)."""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irc.dialects import loop

from .affine import Lin
from .ivals import Lanes, abi_size, add, count, ival, kconst, mangle_el, mul, same, splat
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


class Access:
    """The body's loads (`load`), the outputs' stores (`store`) and what a pass reads back of them (`load_out`), at
    a point of the space: `dims` holds each dim's index, a Lanes for the vector dim inside a vector body."""

    def __init__(self, space, frame, prefetch, streams):
        self.space, self.frame, self.prefetch, self.streams = space, frame, prefetch, streams

    def load(self, b, op: loop.LoadOp, dims, env, width):
        s, f = self.space, self.frame
        spec = s.spec(op.source)
        guard = s.guards[op]
        extra = [env[i] for i in op.indices]
        exprs = op.map.data.results
        st, elem = storage_type(spec.elem), spec.elem
        lanes_in = width and s.v is not None and isinstance(dims[s.v], Lanes)
        mask = dims[s.v].mask if lanes_in else None
        vec_extra = any(count(x) for x in extra)
        coefs = [s.lane_step(e, width) for e in exprs] if lanes_in and not vec_extra else [None]
        if None not in coefs:
            scalar_dims = [x.base if isinstance(x, Lanes) else x for x in dims]
            step = 0
            for c, stride in zip(coefs, spec.strides):
                step = add(b, step, mul(b, f.lin(stride) if c else 0, c))
            if any(guard) and step == 1:  # the lanes inside the buffer: one masked load (not a gather of clamped
                # indices), or one branch where the test is the same for every lane
                flat = f.flat(b, spec, [f.aff(b, e, scalar_dims, None, extra) for e in exprs])
                vp = b.bitcast(b.gep(f.base_ptr(spec), [ival(flat)]), ir.VectorType(st, width).as_pointer())
                guarded = [e for e, g in zip(exprs, guard) if g], [n for n, g in zip(spec.sizes, guard) if g]
                if mask is None:
                    self.prefetch.load_ahead(b, op, spec, scalar_dims, extra, abi_size(st) * width)
                    if all(s.lane_step(e, width) == 0 for e in guarded[0]):  # one test for the whole vector
                        inside = self._inside(b, *guarded, scalar_dims, None, extra)
                        return widen(b, uniform_load(b, vp, inside), elem)
                inside = self._inside(b, *guarded, dims, width, extra)
                return widen(b, masked("load", b, vp, inside if mask is None else b.and_(inside, mask)), elem)
            if not any(guard):
                flat = f.flat(b, spec, [f.aff(b, e, scalar_dims, None, extra) for e in exprs])
                ptr = b.gep(f.base_ptr(spec), [ival(flat)])
                if step == 0:
                    return widen(b, b.load(ptr), elem)
                if step == 1:
                    vp = b.bitcast(ptr, ir.VectorType(st, width).as_pointer())
                    if mask is not None:
                        return widen(b, masked("load", b, vp, mask), elem)
                    self.prefetch.streaming(b, ptr, spec, abi_size(st), width)
                    self.prefetch.load_ahead(b, op, spec, scalar_dims, extra, abi_size(st) * width)
                    return widen(b, b.load(vp, align=max(1, abi_size(st))), elem)
                iota = ir.Constant(ir.VectorType(I64, width), list(range(width)))
                idx = b.add(splat(b, ival(flat), width), b.mul(splat(b, ival(step), width), iota))
                return widen(b, gather(b, f.base_ptr(spec), idx, st, mask), elem)
        w = width if lanes_in or vec_extra else None
        idx = []
        for e, size, g in zip(exprs, spec.sizes, guard):
            x = f.aff(b, e, dims, w, extra)
            idx.append(self._clamp(b, x, size) if g else x)
        flat = f.flat(b, spec, idx)
        base = f.base_ptr(spec)
        if any(guard):
            base = self._nonempty(b, base, spec)
        if count(flat) if not isinstance(flat, int) else False:
            return widen(b, gather(b, base, flat, st, mask), elem)
        return widen(b, b.load(b.gep(base, [ival(flat)])), elem)

    def load_out(self, b, i: int, dims, width):
        """What `store` wrote to output i at the point `dims` (in its element type, which is the compute type)."""
        spec, ptr, lanes, mask = self._out_ptr(b, i, dims)
        if lanes and width:
            vp = b.bitcast(ptr, ir.VectorType(storage_type(spec.elem), width).as_pointer())
            if mask is not None:
                return masked("load", b, vp, mask)
            return b.load(vp, align=max(1, abi_size(storage_type(spec.elem))))
        return b.load(ptr)

    def store(self, b, i: int, value, dims, width):
        spec, ptr, lanes, mask = self._out_ptr(b, i, dims)
        if lanes and width:
            value = narrow(b, splat(b, value, width), spec.elem)
            vp = b.bitcast(ptr, value.type.as_pointer())
            if mask is not None:
                return masked("store", b, vp, mask, value)
            self.prefetch.store_ahead(b, i, spec, dims, abi_size(value.type.element) * width)
            if not self.streams.store(b, i, value, vp):
                b.store(value, vp, align=max(1, abi_size(value.type.element)))
        else:
            b.store(narrow(b, value, spec.elem), ptr)

    def _out_ptr(self, b, i: int, dims):
        """Output i's address at the point `dims`, whether a lane moves along it, and the lanes' mask."""
        spec = self.space.spec(self.space.nest.outs[i])
        idx, lanes, mask = [], False, None
        for x in self.space.out_index(i, dims):
            if isinstance(x, Lanes):
                lanes, x, mask = True, x.base, x.mask
            idx.append(x)
        return spec, b.gep(self.frame.base_ptr(spec), [ival(self.frame.flat(b, spec, idx))]), lanes, mask

    def _inside(self, b, exprs, sizes, dims, width: int | None, extra):
        """<width x i1>: the lanes whose indices `exprs` lie inside `sizes` (the guarded dims of a load); with no
        width, one i1 for indices that do not move with the lane (`dims` then holds the vector's first point)."""
        ok = None
        for e, size in zip(exprs, sizes):
            x, hi = ival(self.frame.aff(b, e, dims, width, extra)), ival(self.frame.lin(size))
            if width:
                x, hi = splat(b, x, width), splat(b, hi, width)
            cond = b.and_(b.icmp_signed(">=", x, kconst(x, 0)), b.icmp_signed("<", x, hi))
            ok = cond if ok is None else b.and_(ok, cond)
        return ok

    def _clamp(self, b, x, size: Lin):
        hi = add(b, self.frame.lin(size), -1)
        if isinstance(x, int) and isinstance(hi, int):
            return min(max(x, 0), max(hi, 0))
        x, hi = same(b, ival(x) if isinstance(x, int) else x, hi)
        x = b.select(b.icmp_signed(">", x, hi), hi, x)
        return b.select(b.icmp_signed("<", x, kconst(x, 0)), kconst(x, 0), x)

    def _nonempty(self, b, base, spec: BufSpec):
        """A guarded load from a buffer that may hold no element reads a zero cell instead."""
        if all(s.static and s.const > 0 for s in spec.sizes):
            return base
        ok = ir.Constant(I1, 1)
        for s in spec.sizes:
            if not (s.static and s.const > 0):
                ok = b.and_(ok, b.icmp_signed(">", ival(self.frame.lin(s)), ir.Constant(I64, 0)))
        if "irc_zero" not in b.module.globals:
            g = ir.GlobalVariable(b.module, ir.ArrayType(I8, 64), "irc_zero")
            g.initializer, g.global_constant, g.linkage = ir.Constant(ir.ArrayType(I8, 64), None), True, "internal"
        zero = b.bitcast(b.module.globals["irc_zero"], base.type)
        return b.select(ok, base, zero)


def uniform_load(b, vp, inside):
    """A whole vector where `inside`, else zeros: a branch, not a masked load. LLVM joins the branch to the one a
    padded window's select takes on the same test, and the load in it is a plain one, where a masked load would
    read every window of a padded pool."""
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


def masked(kind: str, b, vp, mask, value=None):
    """llvm.masked.load / llvm.masked.store through a vector pointer: lanes outside `mask` are not touched."""
    vty = vp.type.pointee
    align = ir.Constant(I32, max(1, abi_size(vty.element)))
    name = f"llvm.masked.{kind}.v{vty.count}{mangle_el(vty.element)}.p0"
    if kind == "load":
        ty = ir.FunctionType(vty, [vp.type, I32, mask.type, vty])
        fn = b.module.globals.get(name) or ir.Function(b.module, ty, name)
        return b.call(fn, [vp, align, mask, ir.Constant(vty, None)])
    ty = ir.FunctionType(ir.VoidType(), [vty, vp.type, I32, mask.type])
    fn = b.module.globals.get(name) or ir.Function(b.module, ty, name)
    return b.call(fn, [value, vp, align, mask])


def gather(b, base, idx, st, mask=None):
    """llvm.masked.gather of the `st` elements at base + idx (a <n x i64> of element offsets)."""
    n = idx.type.count
    addr = b.add(splat(b, b.ptrtoint(base, I64), n), b.mul(idx, splat(b, ir.Constant(I64, abi_size(st)), n)))
    ptrs = b.inttoptr(addr, ir.VectorType(st.as_pointer(), n))
    vty = ir.VectorType(st, n)
    name = f"llvm.masked.gather.v{n}{mangle_el(st)}.v{n}p0"
    ty = ir.FunctionType(vty, [ptrs.type, I32, ir.VectorType(I1, n), vty])
    fn = b.module.globals.get(name) or ir.Function(b.module, ty, name)
    if mask is None:
        mask = ir.Constant(ir.VectorType(I1, n), [ir.Constant(I1, 1)] * n)
    align = ir.Constant(I32, max(1, abi_size(st)))
    return b.call(fn, [ptrs, align, mask, ir.Constant(vty, None)])
