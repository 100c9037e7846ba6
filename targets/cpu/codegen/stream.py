"""Non-temporal stores: a pointwise kernel writes a large output around the caches.

A store of a line the caches do not hold first reads it from memory (to own it), then writes it back when it is
evicted: a third of a pointwise kernel's traffic. Non-temporal stores write whole lines straight to memory and
leave nothing in the caches for the next kernel, so only outputs too big to stay there take them: at least
tuning.STREAM_MIN_BYTES, 3/4 of the last-level cache, as glibc's memcpy decides (its non_temporal_threshold;
IRC_STREAM_STORES sets it). Below that, a kernel that reads the output next finds it in the cache, and streaming it
out would make that kernel read it back from memory.

A non-temporal vector store must be aligned to its size, and an output may start anywhere (an input written in
place), so the kernel checks its streamed outputs' first elements once per call and runs its items twice over in
the code: with non-temporal stores where they are aligned, with plain ones where not. A fence after the items
makes the weakly ordered stores visible to every thread.
"""

from __future__ import annotations

import math

from llvmlite import ir

from . import tuning
from .ivals import abi_size, add, ival, mul
from .types import storage_type
from .vec import I32, I64


class Streams:
    """The outputs a kernel may write around the caches (`outputs`: output -> the alignment of its vectors), the
    kernel's items emitted once or twice over (`items`), and its stores of those outputs (`store`)."""

    def __init__(self, space, frame):
        self.space, self.frame = space, frame
        self.streaming = False  # the code being emitted writes `outputs` with non-temporal stores
        self.outputs = self._outputs()

    def _outputs(self) -> dict[int, int]:
        """Outputs whose whole vectors may be written around the caches, each with the alignment its vectors'
        addresses then have: those of a pointwise kernel (mode B, no reduction) of a static size of at least
        STREAM_MIN_BYTES, contiguous along v, every other stride a multiple of a vector. Such a vector starts a
        multiple of the width from the output's first element: it is aligned where that element is."""
        s = self.space
        if not tuning.STREAM_MIN_BYTES or s.mode != "B" or s.R or s.L is None or not s.aligned:
            return {}
        out = {}
        for i, dims in enumerate(s.out_dims):
            spec = s.spec(s.nest.outs[i])
            if s.v not in dims or not all(q.static for q in spec.sizes + spec.strides):
                continue
            es = abi_size(storage_type(spec.elem))
            align, j = min(64, s.L * es), dims.index(s.v)
            if math.prod(q.const for q in spec.sizes) * es < tuning.STREAM_MIN_BYTES or spec.strides[j].const != 1:
                continue
            others = [k for k in range(len(dims)) if k != j]
            if all(spec.sizes[k].const == 1 or spec.strides[k].const * es % align == 0 for k in others):
                out[i] = align
        return out

    def aligned_outputs(self):
        """An i1, in the entry block: every streamed output's first element lies at a multiple of its alignment."""
        f = self.frame
        b, ok = f.entry, ir.Constant(ir.IntType(1), 1)
        for i, align in self.outputs.items():
            spec = self.space.spec(self.space.nest.outs[i])
            first = add(b, f.cell(spec.ptr), mul(b, f.lin(spec.offset), abi_size(storage_type(spec.elem))))
            aligned = b.icmp_unsigned("==", b.and_(ival(first), ir.Constant(I64, align - 1)), ir.Constant(I64, 0))
            ok = b.and_(ok, aligned)
        return ok

    def items(self, b, start, end, item) -> None:
        """The items [start, end): item(b, i) each, twice over where some output streams (module docstring)."""
        loop = self.frame.loop
        if not self.outputs:
            return loop(b, start, end, 1, item)
        with b.if_else(self.aligned_outputs()) as (aligned, unaligned):
            with aligned:
                self.streaming = True
                loop(b, start, end, 1, item)
                b.fence("seq_cst")
                self.streaming = False
            with unaligned:
                loop(b, start, end, 1, item)

    def store(self, b, i: int, value, vp) -> bool:
        """Store the whole vector `value` of output i at vp around the caches, where the code being emitted streams
        it; False elsewhere (the caller stores it)."""
        if not (self.streaming and i in self.outputs):
            return False
        st = b.store(value, vp, align=self.outputs[i])
        st.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(I32, 1)]))
        return True
