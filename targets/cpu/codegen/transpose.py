"""Transposed reads in registers: a pointwise kernel reading a buffer across its lines (a transposed copy, a
kernel after a product computed as its transpose) loads whole vectors along the lines and transposes them.

A transposed tile (tiles.TRANSPOSE_TILE) blocks the outer dim along which such a read is contiguous. Read
lane by lane, each vector of it is a gather of L elements from L lines: 2048^2 `x.t().contiguous()` took 8.0-8.5
ms, 0.30x inductor (2.4-2.9 ms this way, process pairs; inductor 2.56). Here every L x L block of the tile (L rows of the blocked dim by one vector of columns)
instead loads L vectors, one per column, each contiguous along the blocked dim, and transposes them with
log2(L) rounds of two-source shuffles (L log2 L shuffles, vpermt2ps on AVX-512): row r of the block then has
its vector of columns, and the body runs row by row with that value in place of the load. Rows and columns
short of a whole block run the plain way (gathers).

Only unguarded loads of a pointwise kernel (no reduction dims) whose tile holds whole blocks take this path.
"""

from __future__ import annotations

from functools import cached_property

from llvmlite import ir

from irc.dialects import loop

from .ivals import Lanes, abi_size, add, ival, mul, sdiv, set_at
from .tiles import steps_along, strided_loads
from .types import storage_type, widen


def transpose(b: ir.IRBuilder, rows: list) -> list:
    """The columns of the square matrix whose rows are `rows` (L vectors of L lanes, L a power of two): each round
    swaps the off-diagonal s x s blocks of every 2s x 2s block."""
    n, out, s = len(rows), list(rows), len(rows) // 2
    while s:
        for i in range(n):
            if i & s:
                continue
            lo, hi = out[i], out[i + s]
            keep = [c if not c & s else n + c - s for c in range(n)]
            take = [c + s if not c & s else n + c for c in range(n)]
            out[i] = b.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(ir.IntType(32), n), keep))
            out[i + s] = b.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(ir.IntType(32), n), take))
        s //= 2
    return out


class Transposes:
    """Mixed into KernelEmitter (which provides L, R, v, tile, blocked, guards, params, args, chunk, loop, lanes_loop,
    region)."""

    @cached_property
    def transposed_loads(self) -> list[loop.LoadOp]:
        """The loads this kernel reads in registers (module docstring); [] where it takes the plain path."""
        if self.blocked is None or self.R or not self.L or self.L & (self.L - 1) or not self.aligned:
            return []
        if self.tile.rows % self.L or not self.tile.cols or self.tile.cols % self.L:
            return []
        return [op for op in strided_loads(self) if steps_along(self, op, self.blocked) == 1 and not any(self.guards[op])]

    def whole(self, b, lo, hi):
        """The end of the whole blocks of L from lo towards hi."""
        return add(b, lo, mul(b, sdiv(b, add(b, hi, mul(b, lo, -1)), self.L), self.L))

    def transposed_rows(self, b, dims, lo, hi, c) -> None:
        """Rows [lo, hi) of the blocked dim in column chunk c: whole blocks of L rows, then the rest row by row."""
        cols = self.chunk(b, c)
        whole = self.whole(b, lo, hi)
        self.loop(b, lo, whole, self.L, lambda b, r: self.row_block(b, set_at(dims, self.blocked, r), cols))
        self.loop(b, whole, hi, 1, lambda b, r: self.columns(b, set_at(dims, self.blocked, r), *cols))

    def row_block(self, b, dims, cols) -> None:
        """L rows from dims[blocked] over columns [lo, hi): whole vectors of columns as blocks, the rest row by row."""
        lo, hi = cols
        whole = self.whole(b, lo, hi)
        self.loop(b, lo, whole, self.L, lambda b, i: self.block(b, set_at(dims, self.v, i)))
        r0 = dims[self.blocked]
        self.loop(b, r0, add(b, r0, self.L), 1, lambda b, r: self.columns(b, set_at(dims, self.blocked, r), whole, hi))

    def columns(self, b, dims, lo, hi) -> None:
        """One row over columns [lo, hi), the plain way (the emitter's own point too)."""
        self.lanes_loop(b, lo, hi, lambda b, i, w: self.region(b, set_at(dims, self.v, i), w))

    def block(self, b, dims) -> None:
        """The L x L block at dims (blocked: its first row; v: its first column)."""
        L, r0, i = self.L, dims[self.blocked], dims[self.v]
        columns = {}
        for op in self.transposed_loads:
            spec = self.params[self.args.index(op.source)]
            st = storage_type(spec.elem)
            lines = []
            for j in range(L):  # column i + j: L elements along the blocked dim, contiguous
                at = set_at(dims, self.v, add(b, i, j))
                flat = self.flat(b, spec, [self.aff(b, e, at, None) for e in op.map.data.results])
                vp = b.bitcast(b.gep(self.base_ptr(spec), [ival(flat)]), ir.VectorType(st, L).as_pointer())
                lines.append(widen(b, b.load(vp, align=max(1, abi_size(st))), spec.elem))
            columns[op.result] = transpose(b, lines)
        for r in range(L):
            at = set_at(set_at(dims, self.blocked, add(b, r0, r)), self.v, Lanes(i))
            self.region(b, at, L, {x: cols[r] for x, cols in columns.items()})
