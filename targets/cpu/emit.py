"""The kernel emitter: one buffer-form `loop.nest`, specialised for a launch, as an LLVM function

    void kernel(i64 start, i64 end, i64** argv)      # *argv[k]: root address or index value k

Its work is a range of items (what parallel.parallel_for splits across threads): an item is one point
of the outer parallel dims (and, when the innermost dim is parallel, one chunk of it). Let v be the
innermost dim whose extent is not a static 1. When v is parallel ("mode B"), each item runs v in
vectors of `lanes` elements plus a scalar tail, and each point of v computes every reduction over the
reduction dims in vector lanes (no horizontal step). When v is a reduction dim ("mode A", rows),
each item is one row: every loop.reduce is one pass over the reduction dims with a vector accumulator
and a scalar tail, combined horizontally at the end of the pass; later passes (softmax's sum after its
max) see earlier results as uniform scalars; full outputs take a last pass.

A body value is a scalar (uniform across the lanes) or a vector; an op with mixed operands broadcasts
the scalars. Loads whose address moves by one element per lane are vector loads, by zero a scalar
load, by another stride a gather. A load the bounds analysis (affine.interval) cannot prove in bounds
is guarded: its indices are clamped into the buffer (the dialect leaves such values unspecified; only
a discarded select arm reads them), so generated code never touches memory outside its buffers.
Stores go to contiguous outputs whose sizes are proven to match the space (else Unsupported).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir.affine import AffineBinaryOpExpr, AffineConstantExpr, AffineDimExpr, AffineSymExpr

from irc.dialects import loop

from . import reduce as red
from .affine import K, Lin, coefficient, interval, to_lin, uses_dim, within
from .ops import EMIT, Cx
from .types import Unsupported, compute_type, narrow, storage_type, widen
from .vec import I1, I8, I32, I64

VOID = ir.VoidType()
ARGV = I64.as_pointer().as_pointer()
CHUNK = 8192  # elements of the innermost parallel dim per item


@dataclass(frozen=True)
class BufSpec:
    """A memref parameter as the launch passes it: element type, sizes, strides and offset (elements)."""

    elem: object
    sizes: tuple[Lin, ...]
    strides: tuple[Lin, ...]
    offset: Lin
    ptr: int  # argv index of the root address


class Lanes:
    """The vector dim inside a vector body: lanes base, base + 1, ..."""

    def __init__(self, base):
        self.base = base


def _splat(b, x, n):
    if isinstance(x.type, ir.VectorType):
        return x
    v = b.insert_element(ir.Constant(ir.VectorType(x.type, n), ir.Undefined), x, ir.Constant(I32, 0))
    return b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, n), [0] * n))


def _count(x):
    return x.type.count if isinstance(getattr(x, "type", None), ir.VectorType) else None


class KernelEmitter:
    def __init__(self, module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int):
        self.nest, self.params = nest, list(params)
        self.args = list(nest.parent_block().args)
        self.fn = ir.Function(module, ir.FunctionType(VOID, [I64, I64, ARGV]), name)
        self.fn.args[2].add_attribute("noalias")
        self.entry = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.cells: dict[int, ir.Value] = {}
        self.ops = [op for op in nest.body.block.ops if not isinstance(op, loop.YieldOp)]
        self.opset = set(self.ops)
        self.yields = list(nest.yield_op.values)
        self.reduces = [op for op in self.ops if isinstance(op, loop.ReduceOp)]
        self.syms = [self.param(s) for s in nest.symbols]
        self.sym_lins = [params[self.args.index(s)] for s in nest.symbols]
        self.ext_lin = [to_lin(e, self.sym_lins) for e in nest.extents]
        self.ext_static = [q.const if q is not None and q.static else None for q in self.ext_lin]
        self.R = [d for d in nest.reduction_dims() if self.ext_static[d] != 1]
        live = [d for d in range(nest.rank) if self.ext_static[d] != 1]
        self.v = live[-1] if live else None
        self.mode = "A" if self.v is not None and self.v in self.R else "B"
        small = self.v is not None and self.ext_static[self.v] is not None and self.ext_static[self.v] < lanes
        self.L = None if self.v is None or small or lanes < 2 else lanes
        self.outer = [d for d in nest.parallel_dims() if self.ext_static[d] != 1 and not (self.mode == "B" and d == self.v)]
        self.guards = {op: self._guards(op) for op in self.ops if isinstance(op, loop.LoadOp)}
        self.out_dims = [self._out_dims(i) for i in range(len(self.yields))]

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
            acc = _add(self.entry, acc, _mul(self.entry, self.cell(c), k))
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
            return b.add(_splat(b, _ival(x.base), width), iota)
        return x

    def aff(self, b, e, dims, width, extra=()):
        if isinstance(e, AffineConstantExpr):
            return e.value
        if isinstance(e, AffineDimExpr):
            return self.dimval(b, dims[e.position], width) if e.position < len(dims) else extra[e.position - len(dims)]
        if isinstance(e, AffineSymExpr):
            return self.syms[e.position]
        assert isinstance(e, AffineBinaryOpExpr)
        x, y = self.aff(b, e.lhs, dims, width, extra), self.aff(b, e.rhs, dims, width, extra)
        if e.kind == K.Add:
            return _add(b, x, y)
        if e.kind == K.Mul:
            return _mul(b, x, y)
        if isinstance(x, int) and isinstance(y, int):
            return {K.FloorDiv: x // y, K.CeilDiv: -(-x // y), K.Mod: x % y}[e.kind]
        x, y = _same(b, x, y)
        q, r = b.sdiv(x, y), b.srem(x, y)
        neg = b.and_(b.icmp_signed("!=", r, _k(r, 0)), b.icmp_signed("<", b.xor(r, y), _k(r, 0)))
        if e.kind == K.Mod:
            return b.add(r, b.select(neg, y, _k(y, 0)))
        fl = b.sub(q, b.zext(neg, q.type))
        if e.kind == K.FloorDiv:
            return fl
        exact = b.icmp_signed("==", b.mul(fl, y), x)
        return b.add(fl, b.zext(b.not_(exact), fl.type))

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
        vec_extra = any(_count(x) for x in extra)
        if lanes_in and not any(guard) and not vec_extra:
            coefs = [coefficient(e, self.v) for e in exprs]
            if None not in coefs:
                scalar_dims = [x.base if isinstance(x, Lanes) else x for x in dims]
                flat = self.flat(b, spec, [self.aff(b, e, scalar_dims, None, extra) for e in exprs])
                step = 0
                for c, s in zip(coefs, spec.strides):
                    step = _add(b, step, _mul(b, self.lin(s) if c else 0, c))
                ptr = b.gep(self.base_ptr(spec), [_ival(flat)])
                if step == 0:
                    return widen(b, b.load(ptr), elem)
                if step == 1:
                    vp = b.bitcast(ptr, ir.VectorType(st, width).as_pointer())
                    return widen(b, b.load(vp, align=max(1, st.get_abi_size(_td()))), elem)
                iota = ir.Constant(ir.VectorType(I64, width), list(range(width)))
                idx = b.add(_splat(b, _ival(flat), width), b.mul(_splat(b, _ival(step), width), iota))
                return widen(b, self.gather(b, self.base_ptr(spec), idx, st), elem)
        w = width if lanes_in or vec_extra else None
        idx = []
        for e, size, g in zip(exprs, spec.sizes, guard):
            x = self.aff(b, e, dims, w, extra)
            idx.append(self.clamp(b, x, size) if g else x)
        flat = self.flat(b, spec, idx)
        base = self.base_ptr(spec)
        if any(guard):
            base = self.nonempty(b, base, spec)
        if _count(flat) if not isinstance(flat, int) else False:
            return widen(b, self.gather(b, base, flat, st), elem)
        return widen(b, b.load(b.gep(base, [_ival(flat)])), elem)

    def flat(self, b, spec: BufSpec, idx):
        acc = self.lin(spec.offset)
        for x, s in zip(idx, spec.strides):
            acc = _add(b, acc, _mul(b, x, self.lin(s)))
        return acc

    def clamp(self, b, x, size: Lin):
        hi = _add(b, self.lin(size), -1)
        if isinstance(x, int) and isinstance(hi, int):
            return min(max(x, 0), max(hi, 0))
        x, hi = _same(b, _ival(x) if isinstance(x, int) else x, hi)
        x = b.select(b.icmp_signed(">", x, hi), hi, x)
        return b.select(b.icmp_signed("<", x, _k(x, 0)), _k(x, 0), x)

    def nonempty(self, b, base, spec: BufSpec):
        """A guarded load from a buffer that may hold no element reads a zero cell instead."""
        if all(s.static and s.const > 0 for s in spec.sizes):
            return base
        ok = ir.Constant(I1, 1)
        for s in spec.sizes:
            if not (s.static and s.const > 0):
                ok = b.and_(ok, b.icmp_signed(">", _ival(self.lin(s)), ir.Constant(I64, 0)))
        if "irc_zero" not in b.module.globals:
            g = ir.GlobalVariable(b.module, ir.ArrayType(I8, 64), "irc_zero")
            g.initializer, g.global_constant, g.linkage = ir.Constant(ir.ArrayType(I8, 64), None), True, "internal"
        zero = b.bitcast(b.module.globals["irc_zero"], base.type)
        return b.select(ok, base, zero)

    def gather(self, b, base, idx, st):
        n = idx.type.count
        addr = b.add(_splat(b, b.ptrtoint(base, I64), n), b.mul(idx, _splat(b, ir.Constant(I64, st.get_abi_size(_td())), n)))
        ptrs = b.inttoptr(addr, ir.VectorType(st.as_pointer(), n))
        vty = ir.VectorType(st, n)
        name = f"llvm.masked.gather.v{n}{_mangle_el(st)}.v{n}p0"
        fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(vty, [ptrs.type, I32, ir.VectorType(I1, n), vty]), name)
        mask = ir.Constant(ir.VectorType(I1, n), [ir.Constant(I1, 1)] * n)
        align = ir.Constant(I32, max(1, st.get_abi_size(_td())))
        return b.call(fn, [ptrs, align, mask, ir.Constant(vty, ir.Undefined)])

    def store(self, b, i: int, value, dims, width):
        spec = self.params[self.args.index(self.nest.outs[i])]
        idx, lanes = [], False
        for d in self.out_dims[i]:
            x = 0 if d is None else dims[d]
            if isinstance(x, Lanes):
                lanes, x = True, x.base
            idx.append(x)
        ptr = b.gep(self.base_ptr(spec), [_ival(self.flat(b, spec, idx))])
        if lanes and width:
            value = narrow(b, _splat(b, value, width), spec.elem)
            b.store(value, b.bitcast(ptr, value.type.as_pointer()), align=max(1, value.type.element.get_abi_size(_td())))
        else:
            b.store(narrow(b, value, spec.elem), ptr)

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
        for op in self.ops:
            if op in need:
                local[op.results[0]] = self.emit_op(b, op, dims, local, width)
        return local

    def emit_op(self, b, op, dims, env, width):
        if isinstance(op, loop.LoadOp):
            return self.load(b, op, dims, env, width)
        if isinstance(op, loop.IndexOp):
            x = self.aff(b, op.map.data.results[0], dims, width)
            return ir.Constant(I64, x) if isinstance(x, int) else x
        fn = EMIT.get(type(op))
        if fn is None:
            raise Unsupported(f"no CPU emitter for {op.name}")
        args = [env[o] for o in op.operands]
        n = max((_count(a) or 0 for a in args), default=0)
        if n:
            args = [_splat(b, a, n) for a in args]
        return fn(Cx(b, n or None), op, *args)

    def loop(self, b, lo, hi, step, body):
        pre, head = b.block, self.fn.append_basic_block("head")
        inside, done = self.fn.append_basic_block("body"), self.fn.append_basic_block("exit")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(_ival(lo), pre)
        b.cbranch(b.icmp_signed("<", i, _ival(hi)), inside, done)
        b.position_at_end(inside)
        body(b, i)
        i.add_incoming(b.add(i, ir.Constant(I64, step)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def lanes_loop(self, b, lo, hi, body):
        """[lo, hi) in vectors of L (body(b, Lanes(i), L)) then a scalar tail (body(b, i, None))."""
        if self.L is None:
            return self.loop(b, lo, hi, 1, lambda b, i: body(b, i, None))
        n = _add(b, hi, _mul(b, lo, -1))
        vend = _add(b, lo, _mul(b, _sdiv(b, n, self.L), self.L))
        self.loop(b, lo, vend, self.L, lambda b, i: body(b, Lanes(i), self.L))
        self.loop(b, vend, hi, 1, lambda b, i: body(b, i, None))

    def rloops(self, b, dims, width, inner, k=0):
        """Loops over the reduction dims at the current point; inner(b, dims, width) at each innermost point."""
        if k == len(self.R):
            return inner(b, dims, width)
        d = self.R[k]

        def at(b, i, w=width):
            return self.rloops(b, _set(dims, d, i), w, inner, k + 1)

        if self.mode == "A" and d == self.v:
            return self.lanes_loop(b, 0, self.extent(d), at)
        self.loop(b, 0, self.extent(d), 1, at)

    def reduction(self, b, r: loop.ReduceOp, dims, width, env):
        kind, t = r.kind.data.value, r.input.type
        arg = kind in ("argmax", "argmin")
        scal = compute_type(t)
        widths = [self.L, None] if self.mode == "A" and self.L else [width]
        accs = {}
        for w in widths:
            ty = ir.VectorType(scal, w) if w else scal
            slot = self.entry.alloca(ty)
            b.store(red.const(ty, red.identity(kind, t), t), slot)
            pos = None
            if arg:
                pty = ir.VectorType(I64, w) if w else I64
                pos = self.entry.alloca(pty)
                b.store(ir.Constant(pty, [ir.Constant(I64, 0)] * w) if w else ir.Constant(I64, 0), pos)
            accs[w] = (slot, pos)

        def inner(b, d, w):
            x = self.evaluate(b, w, d, env, [r.input])[r.input]
            if w:
                x = _splat(b, x, w)
            slot, pslot = accs[w]
            acc = b.load(slot)
            if not arg:
                return b.store(red.combine(b, kind, t, acc, x), slot)
            p = self.dimval(b, d[self.R[0]], w) if self.R else ir.Constant(I64, 0)
            p = _splat(b, _ival(p), w) if w else _ival(p)
            best = b.load(pslot)
            take = red.better(b, kind, t, x, acc, p, best, False)
            b.store(b.select(take, x, acc), slot)
            b.store(b.select(take, p, best), pslot)

        self.rloops(b, dims, width, inner)
        vals = {w: (b.load(s), b.load(p) if p is not None else None) for w, (s, p) in accs.items()}
        if len(widths) == 1:
            return vals[widths[0]][1 if arg else 0]
        hv, hp = red.horizontal(b, kind, t, *vals[self.L]) if arg else (red.horizontal(b, kind, t, vals[self.L][0])[0], None)
        value, pos = red.merge(b, kind, t, hv, vals[None][0], hp, vals[None][1])
        return pos if arg else value

    def region(self, b, dims, width):
        """Every reduction, then the outputs, at one point of the non-reduction dims."""
        env = {}
        for r in self.reduces:
            env[r.result] = self.reduction(b, r, dims, width, env)
        kinds = [self.nest.output_kind(i) if self.nest.reduction_dims() else "full" for i in range(len(self.yields))]
        now = [i for i, k in enumerate(kinds) if k == "reduced" or not self.R]
        later = [i for i in range(len(self.yields)) if i not in now]
        vals = self.evaluate(b, width, dims, env, [self.yields[i] for i in now])
        for i in now:
            self.store(b, i, vals[self.yields[i]], _fill(dims, self.R), width)

        def full(b, d, w):
            vals = self.evaluate(b, w, d, env, [self.yields[i] for i in later])
            for i in later:
                self.store(b, i, vals[self.yields[i]], d, w)

        if later:
            self.rloops(b, dims, width, full)

    def emit(self) -> None:
        b = ir.IRBuilder(self.fn.append_basic_block("items"))
        start, end = self.fn.args[0], self.fn.args[1]
        dims = [0] * self.nest.rank
        chunked = self.mode == "B" and self.v is not None
        nch = _cdiv(self.entry, self.extent(self.v), CHUNK) if chunked else 1

        def item(b, it):
            rem = it
            c = None
            if chunked:
                c, rem = _urem(b, rem, nch), _udiv(b, rem, nch)
            for d in reversed(self.outer):
                e = self.extent(d)
                dims[d], rem = _urem(b, rem, e), _udiv(b, rem, e)
            if not chunked:
                return self.region(b, list(dims), None)
            lo = _mul(b, c, CHUNK)
            hi = _min(b, _add(b, lo, CHUNK), self.extent(self.v))
            self.lanes_loop(b, lo, hi, lambda b, i, w: self.region(b, _set(dims, self.v, i), w))

        self.loop(b, start, end, 1, item)
        b.ret_void()
        self.entry.branch(self.fn.blocks[1])

    # what the runtime needs: items per launch, work per item (for parallel_for's threshold)
    def plan(self):
        return {"outer": [self.nest.extents[d] for d in self.outer],
                "chunk": self.nest.extents[self.v] if self.mode == "B" and self.v is not None else None,
                "inner": [self.nest.extents[d] for d in self.R], "guarded": sum(any(g) for g in self.guards.values()),
                "mode": self.mode, "lanes": self.L or 1}  # fmt: skip


def _td():
    from .jit import engine

    return engine()._tm.target_data


def _mangle_el(t):
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(t)]


def _set(dims, d, x):
    out = list(dims)
    out[d] = x
    return out


def _fill(dims, ds):
    return _set(dims, ds[0], 0) if len(ds) == 1 else [0 if i in ds else x for i, x in enumerate(dims)]


def _ival(x):
    return ir.Constant(I64, x) if isinstance(x, int) else x


def _k(x, v):
    t = x.type
    return ir.Constant(t, [ir.Constant(t.element, v)] * t.count) if isinstance(t, ir.VectorType) else ir.Constant(t, v)


def _same(b, x, y):
    x, y = _ival(x), _ival(y)
    n = _count(x) or _count(y)
    return (_splat(b, x, n), _splat(b, y, n)) if n else (x, y)


def _add(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(y, int) and y == 0:
        return x
    if isinstance(x, int) and x == 0:
        return y
    return b.add(*_same(b, x, y))


def _mul(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    for p, q in ((x, y), (y, x)):
        if isinstance(q, int) and q == 1:
            return p
        if isinstance(q, int) and q == 0:
            return 0
    return b.mul(*_same(b, x, y))


def _sdiv(b, x, k: int):
    return x // k if isinstance(x, int) else b.sdiv(x, ir.Constant(I64, k))


def _cdiv(b, x, k: int):
    return -(-x // k) if isinstance(x, int) else b.sdiv(b.add(x, ir.Constant(I64, k - 1)), ir.Constant(I64, k))


def _udiv(b, x, y):
    if isinstance(y, int) and y == 1:
        return x
    return x // y if isinstance(x, int) and isinstance(y, int) else b.udiv(_ival(x), _ival(y))


def _urem(b, x, y):
    if isinstance(y, int) and y == 1:
        return 0
    return x % y if isinstance(x, int) and isinstance(y, int) else b.urem(_ival(x), _ival(y))


def _min(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return min(x, y)
    x, y = _ival(x), _ival(y)
    return b.select(b.icmp_signed("<", x, y), x, y)


def emit_kernel(module: ir.Module, name: str, nest: loop.NestOp, params, lanes: int) -> dict:
    """Add `name` to `module`; returns the launch plan (see KernelEmitter.plan). Raises Unsupported."""
    k = KernelEmitter(module, name, nest, params, lanes)
    k.emit()
    return k.plan()


__all__ = ["BufSpec", "KernelEmitter", "emit_kernel", "Lanes", "uses_dim", "CHUNK"]
