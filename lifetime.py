"""What irc keeps in a process, and what torch._dynamo.reset() releases.

A graph's compiled state (its Program or Triton graph, their machine code: targets/cpu/runtime/jit.py shares a loaded
module only while something holds it) lives as long as the callable Dynamo caches for it, so it dies when
Dynamo drops its caches. What irc keeps per process beside that is released on reset: the compile reports
(report.py: report.mark()/reports_since() go on counting, so a mark taken before a reset still selects the
graphs compiled after it) and the in-memory caches that register here with `on_reset` (Measured records,
the Triton source modules, the CPU runtime's pool of free buffers); the disk cache stays, as reset promises
("as if you had started a fresh process"). After the next full garbage collection the C heap's free pages go
back to the system (malloc_trim), so the process shrinks by what was released.

The hook is torch's own: torch._dynamo.reset() calls `reset()` on every backend torch.compile was given since
the last reset, and irc.backend has one. A backend that wraps irc.backend (functools.partial, a lambda) is
not the one torch keeps, so each Dynamo graph irc compiles also puts irc.backend among them (`arm`).
"""

from __future__ import annotations

import ctypes
import functools
import gc
from collections.abc import Callable
from contextlib import contextmanager

_RELEASES: list[Callable[[], None]] = []


def on_reset(release: Callable[[], None]) -> Callable[[], None]:
    """Call `release` (no arguments) on every torch._dynamo.reset() after irc compiled something; a decorator."""
    _RELEASES.append(release)
    return release


def release() -> None:
    """Drop irc's per-process state (what registered with on_reset: the reports, the in-memory caches): what a reset does."""
    for fn in list(_RELEASES):
        fn()
    if _trim_after_collection not in gc.callbacks:
        gc.callbacks.append(_trim_after_collection)


def _trim_after_collection(phase: str, info: dict) -> None:
    """Once the next full collection has freed what Dynamo dropped (compiled graphs sit in reference cycles), hand
    the C heap's free pages back to the system: glibc keeps them otherwise, and the process stays as large
    as it was (LLVM's allocations are many and small). Once per reset; nothing where there is no malloc_trim."""
    if phase != "stop" or info.get("generation") != 2:
        return
    gc.callbacks.remove(_trim_after_collection)
    if (trim := _malloc_trim()) is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_compiling = [0]  # depth of nested `compiling()` (a backward compiled while a forward's is open)


@contextmanager
def compiling():
    """While irc (and AOT autograd under it) compiles, the cycle collector is off and the heap from before frozen
    (gc.freeze): xDSL's IR is cycles throughout (ops, blocks and regions name their parents), so a compile
    allocates enough to run many collections, each over everything it made so far, for garbage that is only the IR's.
    What the compile dropped is collected after it, by the next collection (HF BERT-base dynamic int8: irc's stages
    2.32-2.49 -> 2.12-2.21 s, the process's peak RSS +3%). A heap the program froze itself, or a collector it
    switched off, is left as it is."""
    pause = _compiling[0] == 0 and gc.isenabled() and gc.get_freeze_count() == 0
    if pause:
        gc.freeze()
        gc.disable()
    _compiling[0] += 1
    try:
        yield
    finally:
        _compiling[0] -= 1
        if pause:
            gc.enable()
            gc.unfreeze()


def arm(backend) -> None:
    """Make torch._dynamo.reset() call backend.reset (= release), however irc.backend was handed to torch.compile."""
    try:
        from torch._dynamo.eval_frame import cached_backends
    except ImportError:  # another torch: only torch.compile(backend=irc.backend) and backend="irc" reach release
        return
    if isinstance(cached_backends, dict):
        cached_backends.setdefault(id(backend), backend)


__all__ = ["arm", "on_reset", "release"]
