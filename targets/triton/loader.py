"""Triton source files in the irc cache, imported from there: `triton.jit` reads a function's source
from its file, so every generated kernel needs a real one.

A file is named by the hash of its text (and Triton's version) under `<irc cache>/triton/` (irc/cache.py),
written to a temporary file and moved in place (atomic, so concurrent processes never see half a file).
Before a file is imported its bytes are compared with the text it must hold: a damaged one is rewritten,
with a warning on the irc.cache logger. With the cache off (use_cache=False, IRC_CACHE=0) or a cache
directory that is not the user's own, the files go to a private temporary directory instead. Triton keeps
its own cache of native binaries (~/.triton/cache). torch._dynamo.reset() releases the imported modules
(irc/lifetime.py).
"""

import functools
import importlib.util
import sys
import tempfile
from pathlib import Path

from irc import cache, lifetime

from . import ensure_interpreter

_LOADED: dict = {}  # (file key, path) -> the module, once per process and cache directory (until a reset)


@lifetime.on_reset
def _forget() -> None:
    """torch._dynamo.reset(): the modules are no longer shared (nor in sys.modules); a graph still alive keeps
    its own, and the next load of a text imports it afresh."""
    for module in _LOADED.values():
        if sys.modules.get(module.__name__) is module:
            del sys.modules[module.__name__]
    _LOADED.clear()


@functools.cache
def _private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="irc-triton-"))


def source_dir(use_cache: bool = True) -> Path:
    """Where generated Triton files are written: the cache's triton/ folder, or a private temporary one with
    the cache off or not the user's own."""
    return cache.cache_dir() / "triton" if use_cache and cache.usable() else _private_dir()


def _write(path: Path, data: bytes, write) -> bool:
    """Make `path` hold exactly `data` (write: how to write a file): a file that does (written by any
    process) is used as it is; anything else there is damage, replaced. False when it cannot be written."""
    try:
        if path.read_bytes() == data:
            cache.touch(path)
            cache.count("triton", True)
            return True
        cache.discard(path, "its text differs from the kernel's")
    except FileNotFoundError:
        pass
    except OSError:
        return False
    cache.count("triton", False)
    return write(path, data)


def load_source(text: str, *, use_cache: bool = True):
    """The module of a generated Triton file (written under source_dir() if it is not there yet)."""
    ensure_interpreter()  # before triton's first import: its standard library is jitted at import time
    import triton

    key = cache.make_key("triton-source", text, triton.__version__)
    name, data, folder = f"irc_triton_{key[:24]}", text.encode(), source_dir(use_cache)
    if (key, folder) in _LOADED:
        return _LOADED[key, folder]
    path, in_cache = folder / key[:2] / f"{name}.py", folder != _private_dir()
    # a read-only or full cache, or a fan-out folder others may write: the private directory still works
    if in_cache and not (_write(path, data, cache.put_file) and cache.trusted(path.parent, create=False)):
        path, in_cache = _private_dir() / key[:2] / f"{name}.py", False
    if not in_cache and not _write(path, data, cache.write_atomic):
        raise OSError(f"cannot write the Triton source {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton resolves the kernel's globals through its module
    spec.loader.exec_module(module)
    _LOADED[key, folder] = module
    return module
