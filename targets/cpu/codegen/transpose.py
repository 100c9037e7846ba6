"""Transposed reads in registers: a pointwise kernel reading a buffer across its lines (a transposed copy, a
kernel after a product computed as its transpose) loads whole vectors along the lines and transposes them.

A transposed tile (tuning.TRANSPOSE_TILE) blocks the outer dim along which such a read is contiguous. Read lane by
lane, each vector of it would be a gather of L elements from L lines, an element at a time. Here every L x L block of
the tile (L rows of the blocked dim by one vector of columns) instead loads L vectors, one per column, each
contiguous along the blocked dim, and transposes them with log2(L) rounds of two-source shuffles (L log2 L
shuffles, vpermt2ps on AVX-512): row r of the block then has its vector of columns, and the body runs row by row
with that value in place of the load. Rows and columns short of a whole block run the plain way (gathers).

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
    """The loads a kernel reads in registers (`loads`), and the rows of its blocked dim emitted that way (`rows`).
    `columns(b, dims, lo, hi)` and `region(b, dims, width, env)` are the emitter's: one row over a range of columns
    the plain way, and everything at one point (with `env`, values already known there)."""

    def __init__(self, space, frame, columns, region):
        self.space, self.frame, self.columns, self.region = space, frame, columns, region

    @cached_property
    def loads(self) -> list[loop.LoadOp]:
        """The loads this kernel reads in registers (module docstring); [] where it takes the plain path."""
        s, L = self.space, self.space.L
        if s.blocked is None or s.R or not L or L & (L - 1) or not s.aligned:
            return []
        if s.tile.rows % L or not s.tile.cols or s.tile.cols % L:
            return []
        return [op for op in strided_loads(s) if steps_along(s, op, s.blocked) == 1 and not any(s.guards[op])]

    def rows(self, b, dims, lo, hi, cols) -> None:
        """Rows [lo, hi) of the blocked dim over the columns `cols` (lo, hi): whole blocks of L rows, then the rest
        row by row."""
        s = self.space
        whole = self._whole(b, lo, hi)
        self.frame.loop(b, lo, whole, s.L, lambda b, r: self._row_block(b, set_at(dims, s.blocked, r), cols))
        self.frame.loop(b, whole, hi, 1, lambda b, r: self.columns(b, set_at(dims, s.blocked, r), *cols))

    def _whole(self, b, lo, hi):
        """The end of the whole blocks of L from lo towards hi."""
        L = self.space.L
        return add(b, lo, mul(b, sdiv(b, add(b, hi, mul(b, lo, -1)), L), L))

    def _row_block(self, b, dims, cols) -> None:
        """L rows from dims[blocked] over columns [lo, hi): whole vectors of columns as blocks, the rest row by row."""
        s, lo, hi = self.space, *cols
        whole = self._whole(b, lo, hi)
        self.frame.loop(b, lo, whole, s.L, lambda b, i: self._block(b, set_at(dims, s.v, i)))
        r0 = dims[s.blocked]
        self.frame.loop(b, r0, add(b, r0, s.L), 1, lambda b, r: self.columns(b, set_at(dims, s.blocked, r), whole, hi))

    def _block(self, b, dims) -> None:
        """The L x L block at dims (blocked: its first row; v: its first column)."""
        s, f = self.space, self.frame
        L, r0, i = s.L, dims[s.blocked], dims[s.v]
        columns = {}
        for op in self.loads:
            spec = s.spec(op.source)
            st = storage_type(spec.elem)
            lines = []
            for j in range(L):  # column i + j: L elements along the blocked dim, contiguous
                at = set_at(dims, s.v, add(b, i, j))
                flat = f.flat(b, spec, [f.aff(b, e, at, None) for e in op.map.data.results])
                vp = b.bitcast(b.gep(f.base_ptr(spec), [ival(flat)]), ir.VectorType(st, L).as_pointer())
                lines.append(widen(b, b.load(vp, align=max(1, abi_size(st))), spec.elem))
            columns[op.result] = transpose(b, lines)
        for r in range(L):
            at = set_at(set_at(dims, s.blocked, add(b, r0, r)), s.v, Lanes(i))
            self.region(b, at, L, {x: cols[r] for x, cols in columns.items()})
