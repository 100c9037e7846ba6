"""Buffers for the CPU runtime. A large fresh allocation is expensive here: glibc maps it anew each time
and every 4 KiB page faults on first touch (a 64 MB output costs ~25 ms before a kernel writes it).
Buffers of at least HUGE_MIN bytes are therefore anonymous mappings advised to use transparent huge
pages (2 MiB pages: 512x fewer faults), wrapped as tensors that unmap when their storage dies; smaller
ones come from torch. Set IRC_HUGE_PAGES=0 to always use torch's allocator.
"""

from __future__ import annotations

import mmap
import os

import torch

HUGE_MIN = 4 << 20
_HUGE = os.environ.get("IRC_HUGE_PAGES", "1") not in ("0", "false", "off") and hasattr(mmap, "MADV_HUGEPAGE")


def empty(shape, strides, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised tensor of `shape` and `strides` (a dense layout of its elements)."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    if not _HUGE or nbytes < HUGE_MIN:
        return torch.empty_strided(shape, strides, dtype=dtype)
    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        pass
    flat = torch.frombuffer(m, dtype=torch.uint8, count=nbytes)
    return flat.view(dtype).as_strided(shape, strides)


__all__ = ["empty", "HUGE_MIN"]
