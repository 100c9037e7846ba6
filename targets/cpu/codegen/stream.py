"""Non-temporal stores: a pointwise kernel writes a large output around the caches.

A store of a line the caches do not hold first reads it from memory (to own it), then writes it back when it is
evicted: a third of a pointwise kernel's traffic. Non-temporal stores write whole lines straight to memory and
leave nothing in the caches for the next kernel, so only outputs too big to stay there take them: at least
STREAM_MIN_BYTES, 3/4 of the last-level cache, as glibc's memcpy decides (its non_temporal_threshold;
IRC_STREAM_STORES sets it). Measured on this machine (32 MB L3, 2 threads, (x*2+1)*y over contiguous f32, regular
-> non-temporal): 64 MB per buffer 4.85 -> 3.42 ms; with a sum of the output after it 7.03 -> 6.00 ms; 24 MB with
the sum 2.69 -> 2.12 ms; 16 MB with the sum 1.52 -> 1.56 ms, 4 MB 0.24 -> 0.30 ms (the sum then reads it from
memory).

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


def __getattr__(name: str):
    """The runtime's emission-record key (runtime/compiled.py) still reads STREAM_MIN_BYTES here; it lives in
    tuning.py."""
    if name == "STREAM_MIN_BYTES":
        return tuning.STREAM_MIN_BYTES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Streams:
    """Mixed into KernelEmitter (which provides mode, R, L, v, aligned, params, args, nest, out_dims, entry, cell,
    lin, loop)."""

    streaming = False  # the code being emitted writes self.streamed with non-temporal stores

    def streamed_outputs(self) -> dict[int, int]:
        """Outputs whose whole vectors may be written around the caches, each with the alignment its vectors'
        addresses then have: those of a pointwise kernel (mode B, no reduction) of a static size of at least
        STREAM_MIN_BYTES, contiguous along v, every other stride a multiple of a vector. Such a vector starts a
        multiple of the width from the output's first element: it is aligned where that element is."""
        if not tuning.STREAM_MIN_BYTES or self.mode != "B" or self.R or self.L is None or not self.aligned:
            return {}
        out = {}
        for i, dims in enumerate(self.out_dims):
            spec = self.params[self.args.index(self.nest.outs[i])]
            if self.v not in dims or not all(q.static for q in spec.sizes + spec.strides):
                continue
            es = abi_size(storage_type(spec.elem))
            align, j = min(64, self.L * es), dims.index(self.v)
            if math.prod(q.const for q in spec.sizes) * es < tuning.STREAM_MIN_BYTES or spec.strides[j].const != 1:
                continue
            if all(spec.sizes[k].const == 1 or spec.strides[k].const * es % align == 0 for k in range(len(dims)) if k != j):
                out[i] = align
        return out

    def aligned_outputs(self):
        """An i1, in the entry block: every streamed output's first element lies at a multiple of its alignment."""
        b, ok = self.entry, ir.Constant(ir.IntType(1), 1)
        for i, align in self.streamed.items():
            spec = self.params[self.args.index(self.nest.outs[i])]
            first = add(b, self.cell(spec.ptr), mul(b, self.lin(spec.offset), abi_size(storage_type(spec.elem))))
            ok = b.and_(ok, b.icmp_unsigned("==", b.and_(ival(first), ir.Constant(I64, align - 1)), ir.Constant(I64, 0)))
        return ok

    def items(self, b, start, end, item) -> None:
        """The items [start, end): item(b, i) each, twice over where some output streams (module docstring)."""
        if not self.streamed:
            return self.loop(b, start, end, 1, item)
        with b.if_else(self.aligned_outputs()) as (aligned, unaligned):
            with aligned:
                self.streaming = True
                self.loop(b, start, end, 1, item)
                b.fence("seq_cst")
                self.streaming = False
            with unaligned:
                self.loop(b, start, end, 1, item)

    def store_streamed(self, b, i: int, value, vp) -> bool:
        """Store the whole vector `value` of output i at vp around the caches, where the code being emitted streams it."""
        if not (self.streaming and i in self.streamed):
            return False
        st = b.store(value, vp, align=self.streamed[i])
        st.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(I32, 1)]))
        return True
