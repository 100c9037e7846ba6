"""Records measured once per problem on this machine (convolution timings), kept in memory and in the disk
cache (irc.cache) keyed by the problem, the CPU, the thread count and the versions. torch._dynamo.reset()
empties the memory (irc/lifetime.py); the disk keeps them.

    TIMINGS = Measured("layout"); rec = TIMINGS.get(repr(problem), lambda: {"nchw": ...}, use_cache=True)
"""

from __future__ import annotations

import threading
import weakref

import torch

from irc import cache, lifetime

from ..runtime.jit import host, versions


class Measured:
    """One kind of measured record: a second process measures nothing it measured before, unless it was
    measured on a busy machine (cache.quiet()) or with the disk cache off (use_cache=False)."""

    def __init__(self, kind: str):
        self.kind, self.memory, self.lock = kind, {}, threading.Lock()
        self.stats = {"measured": 0, "disk_hits": 0}
        _ALL.add(self)

    def get(self, problem: str, measure, *, use_cache: bool = True) -> dict:
        key = cache.make_key(
            self.kind, problem, host().cpu, str(torch.get_num_threads()), torch.__version__, versions()
        )
        if (rec := self.memory.get(key)) is not None:
            return rec
        with self.lock:
            if (rec := self.memory.get(key)) is not None:
                return rec
            rec = cache.get_json(self.kind, key) if use_cache else None
            if rec is not None:
                self.stats["disk_hits"] += 1
            else:
                rec = measure()  # may raise: nothing is recorded
                self.stats["measured"] += 1
                if use_cache and cache.quiet():
                    cache.put_json(self.kind, key, rec)
            self.memory[key] = rec
            return rec


_ALL: weakref.WeakSet[Measured] = weakref.WeakSet()


@lifetime.on_reset
def _forget() -> None:
    """torch._dynamo.reset(): the records in memory go (those on disk stay)."""
    for m in list(_ALL):
        with m.lock:
            m.memory.clear()
