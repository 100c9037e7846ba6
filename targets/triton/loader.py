"""Triton source files in the irc cache, imported from there: `triton.jit` reads a function's source
from its file, so every generated kernel needs a real one.

A file is named by the hash of its text (and Triton's version) under `<irc cache>/triton/`
(targets/cpu/cache.py: IRC_CACHE_DIR, else $XDG_CACHE_HOME/irc or ~/.cache/irc), written to a temporary
file and moved in place (atomic, so concurrent processes never see half a file). With the cache off
(options={"cache": False}, IRC_CACHE=0) the files go to a private temporary directory instead.
Triton keeps its own cache of native binaries (~/.triton/cache).
"""

import functools
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from irc.targets.cpu import cache

from . import ensure_interpreter

_LOADED: dict = {}  # (file key, path) -> the module, once per process and cache directory


@functools.cache
def _private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="irc-triton-"))


def source_dir() -> Path:
    """Where generated Triton files are written: the cache's triton/ folder, or a temporary one with the cache off."""
    return cache.cache_dir() / "triton" if cache.is_enabled() else _private_dir()


def _write(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load_source(text: str):
    """The module of a generated Triton file (written under source_dir() if it is not there yet)."""
    ensure_interpreter()  # before triton's first import: its standard library is jitted at import time
    import triton

    key = cache.make_key("triton-source", text, triton.__version__)
    name = f"irc_triton_{key[:24]}"
    path = source_dir() / key[:2] / f"{name}.py"
    if (key, path) in _LOADED:
        return _LOADED[key, path]
    try:
        _write(path, text)
    except OSError:  # a read-only or full cache: a private directory still works
        path = _private_dir() / f"{name}.py"
        _write(path, text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton resolves the kernel's globals through its module
    spec.loader.exec_module(module)
    _LOADED[key, path] = module
    return module
