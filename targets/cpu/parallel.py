"""Run a JITed kernel `void k(i64 start, i64 end, args...)` over [start, end) on several threads.

    parallel_for(fn, 0, n, out_ptr, in_ptr)                # fn: a ctypes function from jit.py
    parallel_for(fn, 0, rows, *ptrs, work_per_item=cols)   # an outer loop over rows of `cols` items

ctypes releases the GIL for the whole foreign call, so the chunks really run at once. Pools are
persistent (starting threads costs ~50 us each) with torch.get_num_threads() workers, the calling
thread being one of them: it runs the first chunk itself while the others run theirs, then waits.
On Linux x86-64 the dispatch itself is native (nativepool.py: spin, then futex; one ctypes call per
launch); elsewhere, for float arguments, or with IRC_NATIVE_POOL=0, a Python pool of semaphores
does the same at the price of two GIL hand-offs per launch.
Work below `min_work` items (default 32768 elements: about the point where ~10 us of wake-up
latency stops paying for itself on this class of machine) stays on the calling thread as a single
plain call. Chunks are contiguous and their bounds multiples of `align` items, so the vector body
of each chunk is aligned like the whole and no two threads write one cache line.

A launch while another is in flight on the same pool (from another Python thread, or a kernel that
calls back into Python) runs serially on its caller rather than waiting: never a deadlock.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import torch

from irc import env

from . import nativepool

MIN_WORK = env.get("IRC_PARALLEL_MIN_WORK")


def num_threads() -> int:
    """The parallelism the runtime uses: torch's intra-op thread count (torch.set_num_threads)."""
    return max(1, torch.get_num_threads())


def plan(start: int, end: int, threads: int, *, work_per_item: int = 1, min_work: int = MIN_WORK,
         align: int = 16) -> list[tuple[int, int]]:  # fmt: skip
    """The chunks a launch uses: one chunk when the work is small, else up to `threads` equal ones."""
    n = end - start
    if n <= 0:
        return []
    parts, align = _split(n, threads, work_per_item, min_work, align)
    units = -(-n // align)  # whole aligned units
    bounds = [start + min(n, (units * i // parts) * align) for i in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def _split(n: int, threads: int, work_per_item: int, min_work: int, align: int) -> tuple[int, int]:
    """(number of chunks, alignment of their bounds) for n > 0 items; nativepool splits the same way."""
    if threads <= 1 or n * max(work_per_item, 1) < min_work or n < 2:
        return 1, 1
    align = align if n >= align * threads else 1  # an outer loop of few rows: split by rows
    return min(threads, -(-n // align)), align


@dataclass
class _Task:
    fn: object
    args: tuple
    chunks: list
    errors: list


class Pool:
    """`size` - 1 daemon threads plus the caller. Not started until the first parallel launch."""

    def __init__(self, size: int):
        self.size = size
        self._busy = threading.Lock()  # one launch at a time
        self._go = [threading.Semaphore(0) for _ in range(size - 1)]
        self._done = threading.Semaphore(0)
        self._task: _Task | None = None
        self._threads = [
            threading.Thread(target=self._worker, args=(i,), name=f"irc-cpu-{i + 1}", daemon=True)
            for i in range(size - 1)
        ]
        for t in self._threads:
            t.start()

    def _worker(self, i: int) -> None:
        while True:
            self._go[i].acquire()
            task = self._task
            try:
                s, e = task.chunks[i + 1]
                task.fn(s, e, *task.args)
            except BaseException as exc:  # argument conversion errors: re-raised by the caller
                task.errors.append(exc)
            finally:
                self._done.release()

    def run(self, fn, chunks: list[tuple[int, int]], args: tuple) -> None:
        if len(chunks) == 1 or len(chunks) > self.size or not self._busy.acquire(blocking=False):
            for s, e in chunks:
                fn(s, e, *args)
            return
        try:
            task = self._task = _Task(fn, args, chunks, [])
            for i in range(len(chunks) - 1):
                self._go[i].release()
            try:
                fn(chunks[0][0], chunks[0][1], *args)
            finally:
                for _ in range(len(chunks) - 1):
                    self._done.acquire()
            if task.errors:
                raise task.errors[0]
        finally:
            self._task = None
            self._busy.release()


_pools: dict[int, Pool] = {}
_pools_lock = threading.Lock()


def pool(size: int | None = None) -> Pool:
    """The persistent pool of `size` (default: num_threads()) threads, the caller included."""
    size = size or num_threads()
    p = _pools.get(size)
    if p is None:
        with _pools_lock:
            p = _pools.get(size) or _pools.setdefault(size, Pool(size))
    return p


def parallel_for(fn, start: int, end: int, *args, threads: int | None = None, work_per_item: int = 1,
                 min_work: int = MIN_WORK, align: int = 16) -> None:  # fmt: skip
    """fn(s, e, *args) over chunks covering [start, end); returns when all chunks are done.

    `args` should already be ctypes values (c_void_p(ptr), c_int64(n)) or plain ints the
    function's argtypes convert; converting once outside a hot loop saves ~0.3 us per argument."""
    threads = threads or num_threads()
    n = end - start
    if n <= 0:
        return
    parts, align = _split(n, threads, work_per_item, min_work, align)
    if parts == 1:
        fn(start, end, *args)
        return
    native = native_pool(threads)
    if native is not None and native.run_range(fn, start, end, parts, align, args):
        return
    pool(threads).run(fn, plan(start, end, threads, work_per_item=work_per_item, min_work=min_work, align=align), args)


_native: dict[int, object] = {}
USE_NATIVE = env.get("IRC_NATIVE_POOL")


def _forget_pools() -> None:
    # a forked child has none of the parent's worker threads: waiting on them would hang forever
    global _pools_lock
    _pools.clear()
    _native.clear()
    _pools_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pools)


def native_pool(size: int | None = None):
    """The native-dispatch pool (nativepool.py) of `size` threads, or None where unsupported/disabled."""
    if not USE_NATIVE or not nativepool.supported():
        return None
    size = size or num_threads()
    p = _native.get(size)
    if p is None:
        with _pools_lock:
            p = _native.get(size) or _native.setdefault(size, nativepool.NativePool(size))
    return p
