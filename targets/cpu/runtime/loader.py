"""Loading machine code into the process: a shared object through the dynamic loader, or an object through MCJIT.

    lib = loader.load(blob, shared=loader.shared_objects())
    addr = lib.address("kernel")                    # 0 where the module has no such function

Where the system has a linker (compile_worker.link_shared) the compiled module is a shared object, loaded with
dlopen from a temporary file (unlinked at once; a memory file where the temporary folder is mounted noexec) and
closed with dlclose when the last handle to it goes. The process then never maps
LLVM's own library (about 40 MB resident: llvmlite's binding is imported only by the compile worker), which is
most of what a first call used to add beyond the peers' peak. Without a linker, or where the process's global
scope would bind the OpenMP entry points to another runtime than torch's, objects are loaded by MCJIT in-process,
with those entry points bound by address.
"""

from __future__ import annotations

import _ctypes
import ctypes
import functools
import itertools
import os
import sys
import tempfile
import weakref

from . import compile_worker, parallel


@functools.cache
def shared_objects() -> bool:
    """Compiled modules are linked into shared objects and dlopened: Linux, a linker, and torch's OpenMP entry points
    the ones the dynamic loader binds by name (the process's global scope)."""
    if not sys.platform.startswith("linux") or compile_worker.linker() is None:
        return False
    scope = ctypes.CDLL(None)
    for name, addr in parallel.entry_points().items():
        if ctypes.cast(getattr(scope, name, None) or 0, ctypes.c_void_p).value != addr:
            return False
    return True


class SharedObject:
    """A dlopened shared object; dlclosed when it is collected (its functions must not run after that)."""

    def __init__(self, blob: bytes):
        self._lib, fd = _dlopen(blob)
        self._close = weakref.finalize(self, _close, self._lib._handle, fd)

    def address(self, name: str) -> int:
        try:
            return ctypes.cast(getattr(self._lib, name), ctypes.c_void_p).value or 0
        except AttributeError:  # dlsym found no such name
            return 0


class JitObject:
    """An object loaded by an MCJIT engine of its own (its symbols private to it), freed with the engine."""

    def __init__(self, blob: bytes, target_machine):
        llvm = _mcjit()
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(blob))
        self._engine.finalize_object()

    def address(self, name: str) -> int:
        return self._engine.get_function_address(name)


@functools.cache
def _mcjit():
    llvm = compile_worker.llvm()
    llvm.check_jit_execution()
    for name, addr in parallel.entry_points().items():
        llvm.add_symbol(name, addr)
    return llvm


_opened = itertools.count()
MODE = os.RTLD_NOW | os.RTLD_LOCAL


def _dlopen(blob: bytes) -> tuple[ctypes.CDLL, int | None]:
    """dlopen a shared object given as bytes: (the library, a file descriptor to close after dlclose, or None).

    Through a temporary file, unlinked at once (the mapping keeps it), with a name never used before in the process:
    the dynamic loader hands back a library already loaded under the same name. Where the temporary folder forbids
    executable mappings (mounted noexec), through a memory file (memfd) instead, held open while the library is
    loaded: its name /proc/self/fd/N is unique only while N is in use."""
    fd, path = tempfile.mkstemp(prefix=f"irc-{os.getpid()}-{next(_opened)}-", suffix=".so")
    try:
        with open(fd, "wb") as f:
            f.write(blob)
        return ctypes.CDLL(path, mode=MODE), None
    except OSError:
        if not hasattr(os, "memfd_create"):
            raise
    finally:
        os.unlink(path)
    fd = os.memfd_create("irc-kernels.so")
    try:
        with open(fd, "wb", closefd=False) as f:
            f.write(blob)
        return ctypes.CDLL(f"/proc/self/fd/{fd}", mode=MODE), fd
    except BaseException:
        os.close(fd)
        raise


def _close(handle: int, fd: int | None) -> None:
    _ctypes.dlclose(handle)
    if fd is not None:
        os.close(fd)
