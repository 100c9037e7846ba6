"""The LLVM function a kernel is emitted into, and what its entry block reads through argv.

    void kernel(i64 start, i64 end, i64** argv)      # *argv[k]: root address or index value k

Each runtime value (a buffer's root address, a dynamic size, stride or symbol) is read once, in the entry block,
from its cell of the call's frame; linear forms over those cells (affine.Lin) become the sizes, strides and
offsets the body uses. The Frame also builds the function's loops: counted ones, and lanes loops that run a
range in vectors with one masked vector for the rest.
"""

from __future__ import annotations

from llvmlite import ir

from irc.ir.index_math import evaluate

from .affine import Lin
from .index_ir import IndexIR
from .ivals import Lanes, add, ival, mul, sdiv, splat
from .types import storage_type
from .vec import I64

VOID = ir.VoidType()
ARGV = I64.as_pointer().as_pointer()


class Frame:
    """The function (`fn`), its entry block (`entry`) and the argv cells read there (`cells`)."""

    def __init__(self, module: ir.Module, name: str, space):
        self.space = space
        self.fn = ir.Function(module, ir.FunctionType(VOID, [I64, I64, ARGV]), name)
        self.fn.args[2].add_attribute("noalias")
        self.entry = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.cells: dict = {}
        self.syms = [self.param(s) for s in space.nest.symbols]

    # -- runtime values, read in the entry block --------------------------------------------------
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
        spec = self.space.spec(arg)
        return self.lin(spec) if isinstance(spec, Lin) else spec

    def extent(self, d: int):
        q = self.space.ext_lin[d]
        return self.lin(q) if q is not None else self.aff(self.entry, self.space.nest.extents[d], [], None)

    def base_ptr(self, spec):
        """A buffer's root address as a pointer to its storage type."""
        key = ("ptr", spec.ptr, str(storage_type(spec.elem)))
        if key not in self.cells:
            self.cells[key] = self.entry.inttoptr(self.cell(spec.ptr), storage_type(spec.elem).as_pointer())
        return self.cells[key]

    def flat(self, b, spec, idx):
        """The element offset of index `idx` into a buffer: its offset plus each index times its stride."""
        acc = self.lin(spec.offset)
        for x, s in zip(idx, spec.strides):
            acc = add(b, acc, mul(b, x, self.lin(s)))
        return acc

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

    # -- loops --------------------------------------------------------------------------------------
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
        L = self.space.L
        if L is None:
            return self.loop(b, lo, hi, 1, lambda b, i: body(b, i, None))
        w = L
        vend = add(b, lo, mul(b, sdiv(b, add(b, hi, mul(b, lo, -1)), w), w))
        self.loop(b, lo, vend, w, lambda b, i: body(b, Lanes(i), L))
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
