"""Buffers for the CPU runtime, and why they are not simply torch.empty.

A large fresh allocation is expensive: glibc maps it anew each time and every 4 KiB page faults on first
touch, which can cost as much as the kernel that then writes the buffer. So buffers of at least HUGE_MIN
bytes (tuning.py) are anonymous mappings advised to use transparent huge pages (2 MiB pages: 512x fewer
faults), wrapped as tensors; and when the last tensor on such a buffer dies
(a weakref finalizer on its storage: the memory can no longer be observed by anyone), the mapping
goes back to a pool, so the next allocation of that size gets pages that are already mapped. Output
storage is thus recycled across calls exactly as far as lifetimes allow: never while the caller holds
any tensor or view on it. The pool keeps at most IRC_POOL_BYTES (default 1 GiB) of free buffers.
IRC_HUGE_PAGES=0 turns all of this off (torch's allocator for everything).
"""

from __future__ import annotations

import ctypes
import gc
import mmap
import threading
import weakref

import torch

from irc import env, lifetime

from .tuning import HUGE_MIN, POOL_BYTES

_PAGE = 2 << 20  # a transparent huge page
_HUGE = env.get("IRC_HUGE_PAGES") and hasattr(mmap, "MADV_HUGEPAGE")
_free: dict[int, list] = {}
_lock = threading.Lock()
STATS = {"pooled_bytes": 0, "reused": 0, "mapped": 0}


# torch's CPU allocation without the Python argument parser (the call inductor's generated code makes): about half
# torch.empty_strided's cost, paid for a small graph's every output and dynamic intermediate
empty_small = getattr(torch._C._dynamo.guards, "_empty_strided_cpu", None) or (
    lambda shape, strides, dtype: torch.empty_strided(shape, strides, dtype=dtype)
)


def empty(shape, strides, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised tensor of `shape` and `strides` (a dense layout of its elements)."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    if not _HUGE or nbytes < HUGE_MIN:
        return empty_small(shape, strides, dtype)
    return _mapped(nbytes).view(dtype).as_strided(shape, strides)


def _mapped(nbytes: int) -> torch.Tensor:
    size = -(-nbytes // _PAGE) * _PAGE
    with _lock:
        maps = _free.get(size)
        m = maps.pop() if maps else None
        if m is not None:
            STATS["pooled_bytes"] -= size
            STATS["reused"] += 1
    if m is None:
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            m.madvise(mmap.MADV_HUGEPAGE)
        except OSError:
            pass
        STATS["mapped"] += 1
    t = torch.frombuffer(m, dtype=torch.uint8, count=nbytes)
    weakref.finalize(t.untyped_storage(), _release, size, m)
    return t


def _release(size: int, m) -> None:
    """The storage on `m` died: keep the mapping for the next buffer of this size (within the cap)."""
    with _lock:
        if STATS["pooled_bytes"] + size <= POOL_BYTES:
            _free.setdefault(size, []).append(m)
            STATS["pooled_bytes"] += size


@lifetime.on_reset
def trim() -> None:
    """Give every pooled buffer back to the system (torch._dynamo.reset() does: irc/lifetime.py)."""
    with _lock:
        _free.clear()
        STATS["pooled_bytes"] = 0


def release_freed() -> None:
    """Free what a phase of work left behind and give it back to the system: the cyclic garbage (IR, variant modules
    and their contexts) and the C heap's free pages, which glibc otherwise keeps mapped for reuse. max-autotune calls
    it between its phases, whose garbage would otherwise stay in the process's peak memory (docs/cpu-target.md)."""
    gc.collect()
    trim_heap = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; other C libraries have none
    if trim_heap is not None:
        trim_heap(0)


__all__ = ["HUGE_MIN", "STATS", "empty", "release_freed", "trim"]
