"""Software prefetches: where the hardware prefetchers fall short, a kernel's loads and stores ask for the lines
they will need (llvm.prefetch, which never faults, even past a buffer's end). The distances are tuning.py's.

    streaming          a contiguous load prefetches PREFETCH bytes ahead: a long vector body leaves the out-of-order
                       window too few iterations to cover the memory's latency
    rows ahead         a mode-B kernel with reduction dims (a column sum, and what fuses into one: gelu's backward
                       with its bias gradient) walks its items' columns down the rows, each step a new page, which
                       the hardware prefetchers do not follow; where its body runs math functions, whose long steps
                       leave the out-of-order window short of the next rows, each load and store also prefetches
                       the row ROWS_AHEAD steps on
    items ahead        a rows kernel of several passes (softmax, layer_norm: mode A) reads each row from memory in
                       its first pass and from L1 in the others; a row is a page or less, where the hardware
                       prefetchers start over, so the first pass's loads also prefetch the row ITEMS_AHEAD items on,
                       which arrives while the later passes run

A buffer the caches hold (static, at most PREFETCH_MIN_BYTES) takes no streaming prefetch, and a light body no
rows-ahead one: there a prefetch only takes a load slot. Rows and items ahead are prefetched at any buffer size.
"""

from __future__ import annotations

import math
from functools import cached_property

from llvmlite import ir

from irc.dialects import loop
from irc.dialects.math_cost import costly_math

from . import tuning
from .affine import uses_dim
from .ivals import Lanes, abi_size, add, imin, ival, set_at
from .stash import cone
from .types import storage_type
from .vec import I8, I32, I64


def _lines(b, ptr, ahead: int, nbytes: int, write: bool) -> None:
    """One llvm.prefetch per cache line of the `nbytes` from `ahead` bytes past ptr."""
    fn = b.module.globals.get("llvm.prefetch.p0") or ir.Function(
        b.module, ir.FunctionType(ir.VoidType(), [I8.as_pointer(), I32, I32, I32]), "llvm.prefetch.p0"
    )
    p8 = b.bitcast(ptr, I8.as_pointer())
    for line in range(0, max(nbytes, 1), tuning.CACHE_LINE):
        at = b.gep(p8, [ir.Constant(I64, ahead + line)])
        b.call(fn, [at, ir.Constant(I32, int(write)), ir.Constant(I32, 3), ir.Constant(I32, 1)])


class Prefetch:
    """The prefetches of one kernel. `first_pass` is set by the emitter while it emits the pass of a rows kernel
    that reads the row from memory; `values_at(b, dims, roots)` computes body values at another point (a gather's
    index at the item ahead)."""

    def __init__(self, space, frame, values_at):
        self.space, self.frame, self.values_at = space, frame, values_at
        self.first_pass = False

    def streaming(self, b, ptr, spec, elem_bytes: int, width: int = 1, write: bool = False) -> None:
        """PREFETCH bytes ahead of a contiguous access of `spec` at ptr, one prefetch per cache line the
        `width`-element step reads (one for a whole step would leave its other lines to arrive late). Not where a
        step's contiguous run is shorter than twice the distance (the line fetched would mostly be another item's),
        nor on a buffer the caches hold."""
        run = self.space.run
        if not tuning.PREFETCH or run is not None and run * elem_bytes < 2 * tuning.PREFETCH:
            return
        if self._in_cache(spec):
            return
        _lines(b, ptr, tuning.PREFETCH, width * elem_bytes, write)

    @staticmethod
    def _in_cache(spec) -> bool:
        """A static buffer of at most PREFETCH_MIN_BYTES (a symbolic one may be any size)."""
        if not all(n.static for n in spec.sizes):
            return False
        return math.prod(n.const for n in spec.sizes) * abi_size(storage_type(spec.elem)) <= tuning.PREFETCH_MIN_BYTES

    @cached_property
    def row_dim(self) -> int | None:
        """The reduction dim whose rows ahead a column reduction prefetches: the innermost one of a mode-B kernel whose
        body runs math functions; None elsewhere (a light body's out-of-order window reaches the next rows)."""
        s = self.space
        if not tuning.PREFETCH or s.mode != "B" or not s.R or not any(costly_math(op) for op in s.ops):
            return None
        return s.R[-1]

    @cached_property
    def item_dim(self) -> int | None:
        """The outer dim whose items ahead the first pass of a rows kernel of several passes prefetches: the innermost
        outer dim of a mode-A kernel with two reductions or more (softmax, layer_norm); None elsewhere."""
        s = self.space
        if not tuning.PREFETCH or s.mode != "A" or len(s.reduces) < 2 or not s.outer:
            return None
        return s.outer[-1]

    def _load_ahead(self) -> tuple[int, int] | None:
        """(dim, steps) along which the current pass's streaming loads also prefetch ahead: a column reduction's
        rows, the first pass of a rows kernel's items; None elsewhere."""
        if self.row_dim is not None:
            return self.row_dim, tuning.ROWS_AHEAD
        if self.first_pass and self.item_dim is not None:
            return self.item_dim, tuning.ITEMS_AHEAD
        return None

    def load_ahead(self, b, op: loop.LoadOp, spec, dims, extra, nbytes: int) -> None:
        """Where the pass prefetches ahead, prefetch the `nbytes` this load reads that many steps on (`dims`: the
        step's scalar dims). A gather (an index loaded in the body: an embedding's row) needs its index there: the
        ops computing it run again at the step ahead, clamped into the dim so that the index's own load stays inside
        its buffer (the prefetch itself never faults, whatever row the index names)."""
        if (ahead := self._load_ahead()) is None:
            return
        d, steps = ahead
        exprs = op.map.data.results
        if op.indices:
            opset, after_reduce = self.space.opset, self.space.after_reduce
            if not self.first_pass or any(o in after_reduce for v in op.indices for o in cone(v, opset)):
                return  # a later pass (the rows are in cache by then), or an index from a reduction's value
            moved = set_at(dims, d, imin(b, add(b, dims[d], steps), add(b, self.frame.extent(d), -1)))
            at = self.values_at(b, moved, list(op.indices))
            extra = [at[v] for v in op.indices]
        elif any(uses_dim(e, d) for e in exprs):
            moved = set_at(dims, d, add(b, dims[d], steps))
        else:
            return
        self._rows(b, spec, [self.frame.aff(b, e, moved, None, extra) for e in exprs], nbytes)

    def store_ahead(self, b, i: int, spec, dims, nbytes: int) -> None:
        """A column reduction's full output i prefetches, for writing, the row ROWS_AHEAD steps on."""
        if (r := self.row_dim) is None or r not in self.space.out_dims[i]:
            return
        scalar = [x.base if isinstance(x, Lanes) else x for x in dims]
        ahead = set_at(scalar, r, add(b, scalar[r], tuning.ROWS_AHEAD))
        self._rows(b, spec, self.space.out_index(i, ahead), nbytes, write=True)

    def _rows(self, b, spec, index, nbytes: int, write: bool = False) -> None:
        """Prefetch the `nbytes` of `spec` at `index` (an access's index at the dims moved ahead)."""
        f = self.frame
        _lines(b, b.gep(f.base_ptr(spec), [ival(f.flat(b, spec, index))]), 0, nbytes, write)
