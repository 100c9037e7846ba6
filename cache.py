"""irc's on-disk cache: compiled object code, mem stages and small JSON records, shared by every target.

Entries are files named by a SHA-256 key under `<dir>/<kind>/<key[:2]>/<key>`, written to a temporary file
in the same directory and moved in place with os.replace (atomic on POSIX: a concurrent reader sees the old
entry, the new one or none, and two writers of one key write the same bytes). Nothing is locked.

Every entry starts with a header (HEADER: magic, format, payload length, SHA-256 of the payload, the key)
checked on each read: a damaged, truncated or misplaced entry is removed with a warning on the `irc.cache`
logger and reads as a miss, so the caller rebuilds it. Nothing is read from, or written to, a directory
that is not owned by the current user or is writable by group or others (like pip and ccache): one warning,
then the process runs without the disk cache.

The cache is capped (max_size(): IRC_CACHE_MAX_SIZE, default 1 GiB): a hit touches the entry's mtime, and a
process that writes prunes the least recently used entries once it has written an eighth of the cap (and at
its first write). Per-kind hits and misses are appended to `<dir>/stats.jsonl` at exit for `irc-cache info`.

    IRC_CACHE_DIR        the directory (default $XDG_CACHE_HOME/irc, else ~/.cache/irc)
    IRC_CACHE=0          turns the cache off for the process
    IRC_CACHE_MAX_SIZE   the cap, in bytes or with a K/M/G suffix ("500M")

This module imports only irc.env (the environment's one reader): any target, the frontend and tools may use it. Callers that honour
options={"cache": False} simply do not call get/put.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from irc import env

log = logging.getLogger("irc.cache")
HEADER = struct.Struct("<8sHQ32s64s")  # magic, format, payload length, sha256(payload), key (64 hex digits)
MAGIC, FORMAT = b"irc-ent\0", 1
USAGE_COMPACT_BYTES = 1 << 16  # stats.jsonl is summed into one line past this size (a line appended meanwhile is lost)
STALE_TMP_S = 3600  # a temporary file this old was left by a process that died while writing

_lock = threading.Lock()
_config = {"enabled": None, "dir": None}  # tests set these
_trust: dict[str, bool] = {}  # directory -> whether it may be used (checked once per process)
_written = {"bytes": 0, "pruned": False}


@dataclass
class Stats:
    """Counters for this process; tests and the compile report read them."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    discarded: int = 0  # damaged entries removed
    errors: list[str] = field(default_factory=list)
    by_kind: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (dir, kind) -> [hits, misses]


STATS = Stats()


def cache_dir() -> Path:
    """The directory in force: set_dir() > $IRC_CACHE_DIR > $XDG_CACHE_HOME/irc > ~/.cache/irc."""
    if _config["dir"] is not None:
        return Path(_config["dir"])
    if directory := env.get("IRC_CACHE_DIR"):
        return Path(directory)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irc"


def set_dir(path: str | os.PathLike | None) -> None:
    """Use `path` for this process (None: back to the environment's choice)."""
    _config["dir"] = None if path is None else os.fspath(path)


def make_key(*parts: str | bytes) -> str:
    """SHA-256 over the parts, each length-prefixed so that ("ab", "c") and ("a", "bc") differ."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


@functools.cache
def sources(*folders: str) -> str:
    """A hash of irc's sources under `folders` (relative to the package): an entry derived by that code is reused
    only by the very code that wrote it."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted((root / folder).rglob("*.py")):
            h.update(p.read_bytes())
    return h.hexdigest()


def max_size() -> int:
    """The cap in bytes: IRC_CACHE_MAX_SIZE (default 1G)."""
    return env.get("IRC_CACHE_MAX_SIZE")


def trusted(directory: Path, create: bool = True) -> bool:
    """Whether `directory` (created if missing and `create`) is owned by this user and not writable by group
    or others; checked once per directory and process, the first refusal logged. Object code and Triton
    sources are loaded only from such directories."""
    d = os.fspath(directory)
    if d not in _trust:
        try:
            if create:
                os.makedirs(d, mode=0o700, exist_ok=True)
            st = os.stat(d)
            uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
            ok, why = st.st_uid == uid and not st.st_mode & 0o022, "owned by another user or writable by group/others"
        except OSError as e:
            ok, why = False, str(e)
        if not ok:
            fix = "chmod go-w it, or set IRC_CACHE_DIR"
            log.warning("irc: not using the disk cache directory %s (%s); running without it (%s)", d, why, fix)
        _trust[d] = ok
    return _trust[d]


def usable() -> bool:
    """The disk cache is on for the process and its directory is trusted."""
    if _config["enabled"] is None:  # read at first use: a bad IRC_CACHE is the compile's error, not an import's
        _config["enabled"] = env.get("IRC_CACHE")
    return _config["enabled"] and trusted(cache_dir())


def _path(kind: str, key: str) -> Path:
    # Two-level fan-out keeps directories small once thousands of kernels are cached.
    return cache_dir() / kind / key[:2] / key


def count(kind: str, hit: bool) -> None:
    """Record a hit or a miss of `kind` for this process (irc-cache info shows the rates)."""
    with _lock:
        if not STATS.by_kind:
            atexit.register(_save_usage)
        counts = STATS.by_kind.setdefault((os.fspath(cache_dir()), kind), [0, 0])
        counts[0 if hit else 1] += 1
        STATS.hits += hit
        STATS.misses += not hit


def discard(path: Path, why: str) -> None:
    """Remove a bad entry (the caller treats it as a miss and rebuilds it) and say so on irc.cache."""
    log.warning("irc: discarding damaged cache entry %s (%s); rebuilding it", path, why)
    with _lock:
        STATS.discarded += 1
    with contextlib.suppress(OSError):
        os.unlink(path)


def _verify(data: bytes, key: str) -> tuple[bytes | None, str]:
    if len(data) < HEADER.size:
        return None, f"{len(data)} bytes, shorter than the header"
    magic, fmt, length, digest, stored = HEADER.unpack_from(data)
    payload = data[HEADER.size :]
    if magic != MAGIC or fmt != FORMAT:
        return None, "not an irc cache entry of this format"
    if stored != key.encode():
        return None, "stored under another key"
    if length != len(payload):
        return None, f"payload of {len(payload)} bytes, header says {length}"
    if hashlib.sha256(payload).digest() != digest:
        return None, "checksum mismatch"
    return payload, ""


def get(kind: str, key: str, *, counted: bool = True) -> bytes | None:
    """The payload stored under (kind, key), verified, or None (a miss); touches the entry for LRU eviction.
    counted=False keeps the lookup out of the hit and miss counts (a probe for an entry that rarely exists)."""
    if not usable():
        return None
    payload = _lookup(kind, key)
    if counted:
        count(kind, payload is not None)
    return payload


def _lookup(kind: str, key: str) -> bytes | None:
    path = _path(kind, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not (trusted(path.parent.parent, create=False) and trusted(path.parent, create=False)):
        return None
    payload, why = _verify(data, key)
    if payload is None:
        discard(path, why)
        return None
    touch(path)
    return payload


def touch(path: Path) -> None:
    """Mark an entry used now: eviction removes the least recently used first."""
    with contextlib.suppress(OSError):
        os.utime(path)


def put(kind: str, key: str, data: bytes) -> bool:
    """Store atomically under a verified header; a failure (read-only or full disk) is recorded, never raised."""
    if not usable():
        return False
    header = HEADER.pack(MAGIC, FORMAT, len(data), hashlib.sha256(data).digest(), key.encode())
    return put_file(_path(kind, key), header + data)


def put_file(path: Path, data: bytes) -> bool:
    """Write a file of the cache (an entry, or a Triton source named by its caller) and prune the cache when
    this process has written enough since it last did."""
    if not write_atomic(path, data):
        return False
    with _lock:
        _written["bytes"] += len(data)
        due = not _written["pruned"] or _written["bytes"] > max_size() // 8
        if due:
            _written.update(bytes=0, pruned=True)
    if due:
        prune(max_size(), keep=0.8)
    return True


def write_atomic(path: Path, data: bytes) -> bool:
    """Write `data` to `path` through a temporary file and os.replace; a failure is recorded, never raised."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:8]}.", suffix=".tmp")
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
    except ValueError:  # verified bytes that are not JSON: written by a broken irc
        discard(_path(kind, key), "not JSON")
        return None


def put_json(kind: str, key: str, value) -> bool:
    return put(kind, key, json.dumps(value, sort_keys=True).encode())


# -- management: what `irc-cache` shows and does ------------------------------------------------------------
@dataclass
class Entry:
    kind: str
    path: Path
    size: int
    used: float  # mtime: the last write or hit


def entries(root: Path | None = None) -> list[Entry]:
    """Every entry (and temporary file) under `root` (default cache_dir()): <root>/<kind>/<fan-out>/<name>."""
    out = []
    for f in (cache_dir() if root is None else Path(root)).glob("*/*/*"):
        with contextlib.suppress(OSError):
            if not f.is_symlink() and f.is_file():
                st = f.stat()
                out.append(Entry(f.parent.parent.name, f, st.st_size, st.st_mtime))
    return out


def prune(limit: int, root: Path | None = None, keep: float = 1.0) -> tuple[int, int]:
    """Remove stale temporaries, then the least recently used entries while the cache is over `limit` bytes,
    down to keep x limit (keep < 1 leaves room, so the next writer does not prune again at once).
    (entries removed, bytes freed)."""
    removed = freed = 0
    now = time.time()
    live = []
    for e in entries(root):
        if e.path.name.startswith(".") and now - e.used > STALE_TMP_S:
            removed, freed = removed + _unlink(e.path), freed + e.size
        elif not e.path.name.startswith("."):
            live.append(e)
    total = sum(e.size for e in live)
    if total > limit:
        for e in sorted(live, key=lambda e: e.used):
            if total <= limit * keep:
                break
            if _unlink(e.path):
                removed, freed, total = removed + 1, freed + e.size, total - e.size
    return removed, freed


def _unlink(path: Path) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:  # gone already: another process pruned it
        return False


def clear(root: Path | None = None) -> tuple[int, int]:
    """Remove every entry and the usage record; (entries removed, bytes freed)."""
    root = cache_dir() if root is None else Path(root)
    removed = prune(-1, root)
    with contextlib.suppress(OSError):
        os.unlink(root / "stats.jsonl")
    return removed


def _save_usage() -> None:
    """Append this process's hits and misses per kind to each cache directory it used (one short line,
    O_APPEND: concurrent processes never interleave their lines)."""
    per_dir: dict[str, dict] = {}
    for (d, kind), counts in STATS.by_kind.items():
        per_dir.setdefault(d, {})[kind] = counts
    for d, counts in per_dir.items():
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(d, "stats.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, json.dumps(counts).encode() + b"\n")
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size > USAGE_COMPACT_BYTES:  # one line per kind instead of one per process
                write_atomic(Path(d) / "stats.jsonl", json.dumps(usage(Path(d))).encode() + b"\n")


def usage(root: Path | None = None) -> dict[str, list[int]]:
    """Hits and misses per kind, summed over the processes that recorded them."""
    root = cache_dir() if root is None else Path(root)
    total: dict[str, list[int]] = {}
    with contextlib.suppress(OSError), open(root / "stats.jsonl") as f:
        for line in f:
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                for kind, (hits, misses) in json.loads(line).items():
                    t = total.setdefault(kind, [0, 0])
                    t[0], t[1] = t[0] + int(hits), t[1] + int(misses)
    return total


BUSY_LOAD = 1.5  # load average per core above which a measurement is not kept on disk


def quiet() -> bool:
    """Whether timings taken now may be kept on disk: the load average is below BUSY_LOAD per core. A choice
    measured while other processes compete (a test suite, a build) is used by this process only, and the
    next process measures again, rather than every later run inheriting it."""
    try:
        return os.getloadavg()[0] < BUSY_LOAD * (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        return True
