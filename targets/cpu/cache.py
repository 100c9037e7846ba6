"""The on-disk cache of the CPU target: compiled object code and small JSON records (extern choices).

Entries are files named by a SHA-256 key under one directory, written to a temporary file in the same
directory and moved in place with os.replace, which is atomic on POSIX: a concurrent reader sees the
old entry, the new one or none, never half of one, and two writers of one key both write the same
bytes. Nothing is ever locked.

    IRC_CACHE_DIR      the directory (default $XDG_CACHE_HOME/irc, else ~/.cache/irc)
    IRC_CACHE=0        turns the cache off for the process (the backend maps options={"cache": False}
                       to `set_enabled(False)` or to `enabled(False)` around one compile)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

_state = threading.local()  # per-thread override set by the `enabled` context manager
_lock = threading.Lock()
_config = {"enabled": os.environ.get("IRC_CACHE", "1") not in ("0", "false", "off"), "dir": None}


@dataclass
class Stats:
    """Counters for this process; tests and the compile report read them."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    errors: list[str] = field(default_factory=list)


STATS = Stats()


def cache_dir() -> Path:
    """The directory in force: set_dir() > $IRC_CACHE_DIR > $XDG_CACHE_HOME/irc > ~/.cache/irc."""
    if _config["dir"] is not None:
        return Path(_config["dir"])
    if env := os.environ.get("IRC_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irc"


def set_dir(path: str | os.PathLike | None) -> None:
    """Use `path` for this process (None: back to the environment's choice)."""
    _config["dir"] = None if path is None else os.fspath(path)


def set_enabled(on: bool) -> None:
    """Turn the on-disk cache on or off for the whole process."""
    _config["enabled"] = bool(on)


def is_enabled() -> bool:
    override = getattr(_state, "enabled", None)
    return _config["enabled"] if override is None else override


@contextlib.contextmanager
def enabled(on: bool):
    """Turn the cache off for the calling thread inside the block (options={"cache": False}); `on` keeps the
    process's setting, so the default option never re-enables a cache IRC_CACHE=0 turned off."""
    old = getattr(_state, "enabled", None)
    _state.enabled = bool(on) and is_enabled()
    try:
        yield
    finally:
        _state.enabled = old


def make_key(*parts: str | bytes) -> str:
    """SHA-256 over the parts, each length-prefixed so that ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _path(kind: str, key: str) -> Path:
    # Two-level fan-out keeps directories small once thousands of kernels are cached.
    return cache_dir() / kind / key[:2] / key


def get(kind: str, key: str) -> bytes | None:
    """The bytes stored under (kind, key), or None; counts a hit or a miss when the cache is on."""
    if not is_enabled():
        return None
    try:
        data = _path(kind, key).read_bytes()
    except OSError:
        with _lock:
            STATS.misses += 1
        return None
    with _lock:
        STATS.hits += 1
    return data


def put(kind: str, key: str, data: bytes) -> bool:
    """Store atomically; a failure (read-only disk, full disk) is recorded, never raised."""
    if not is_enabled():
        return False
    path = _path(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:8]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        with _lock:
            STATS.errors.append(f"{path}: {e}")
        return False
    with _lock:
        STATS.writes += 1
    return True


def get_json(kind: str, key: str):
    data = get(kind, key)
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:  # a foreign or truncated file: treat as absent
        return None


def put_json(kind: str, key: str, value) -> bool:
    return put(kind, key, json.dumps(value, sort_keys=True).encode())


BUSY_LOAD = 1.5  # load average per core above which a measurement is not kept on disk


def quiet() -> bool:
    """Whether timings taken now may be kept on disk: the load average is below BUSY_LOAD per core. A choice
    measured while other processes compete (a test suite, a build) is used by this process only, and the
    next process measures again, rather than every later run inheriting it."""
    try:
        return os.getloadavg()[0] < BUSY_LOAD * (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        return True


class Measured:
    """Records measured once per problem on this machine (extern path choices, convolution timings): kept in
    memory and on disk under `kind`, keyed by the problem, the CPU, the thread count and the versions, so a
    second process measures nothing it measured before (unless it was measured on a busy machine: quiet()).

        CHOICES = Measured("externs"); rec = CHOICES.get(repr(problem), lambda: {"path": ...})
    """

    def __init__(self, kind: str):
        self.kind, self.memory, self.lock = kind, {}, threading.Lock()
        self.stats = {"measured": 0, "disk_hits": 0}

    def get(self, problem: str, measure) -> dict:
        import torch

        from .jit import host, versions

        key = make_key(self.kind, problem, host().cpu, str(torch.get_num_threads()), torch.__version__, versions())
        if (rec := self.memory.get(key)) is not None:
            return rec
        with self.lock:
            if (rec := self.memory.get(key)) is not None:
                return rec
            rec = get_json(self.kind, key)
            if rec is not None:
                self.stats["disk_hits"] += 1
            else:
                rec = measure()  # may raise: nothing is recorded
                self.stats["measured"] += 1
                if quiet():
                    put_json(self.kind, key, rec)
            self.memory[key] = rec
            return rec
