"""Threads: generated kernels run on the OpenMP runtime torch itself uses, with torch's thread count.

torch ships its OpenMP runtime (libgomp on Linux) and runs its own parallel loops, MKL and oneDNN on it.
irc's kernels join the same threads rather than bringing a pool of their own: two pools on the same
cores fight (one wakes while the other's threads still spin after a library call). For each kernel
`void k(i64 start, i64 end, i64** argv)` the emitter adds (outline()), as clang lowers
`#pragma omp parallel`:

    void k_body(i8* data)                          # data: {start, end, argv}; this thread's share of it
    void k_par(i64 start, i64 end, i64** argv, i32 threads)
        -> k(start, end, argv) when threads <= 1, else GOMP_parallel(k_body, &data, threads, 0)

Thread t of a team of n runs items [start + len*t/n, start + len*(t+1)/n): static chunks, so which
thread runs an item never depends on timing, and since every item is computed whole by one thread
(its reductions included) the results do not depend on the thread count either. The compiled code names
the runtime's entry points; the loader (loader.py) binds them to torch's copy (entry_points()). Launches below MIN_WORK units of work (tuning.PARALLEL_MIN_WORK) run serially on the caller:
below it, waking the team costs more than splitting the work saves.

Without an OpenMP runtime (a torch built without one) no k_par is emitted and every kernel runs on the
calling thread. A forked child runs serially too: libgomp's threads do not survive fork (torch's own
parallel ops hang in such a child), and a launch must not wait on them.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import torch
from llvmlite import ir

from ..codegen.vec import I8, I32, I64
from .tuning import PARALLEL_MIN_WORK as MIN_WORK  # read here too, by compiled.py and launch's default

PAR_SIG = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int32)  # k_par(start, end, argv, threads)
ENTRY_POINTS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads")  # libomp and libiomp5 export them too
_forked = False


@functools.cache
def entry_points() -> dict[str, int]:
    """The addresses of ENTRY_POINTS in torch's OpenMP runtime; empty without one. The names are looked up through
    libtorch_cpu (dlsym on a library searches its dependencies), so they are the runtime torch itself calls,
    whatever other copies the process has loaded (wheels vendor their own libgomp)."""
    torch_cpu = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.*"))
    try:
        lib = ctypes.CDLL(torch_cpu[0])
        return {name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in ENTRY_POINTS}
    except (IndexError, OSError, AttributeError):
        return {}


@functools.cache
def runtime() -> str | None:
    """The file of torch's OpenMP runtime; None without one."""
    addrs = entry_points()
    return _file_of(addrs["GOMP_parallel"]) if addrs else None


def _file_of(addr: int) -> str:
    """The mapped file holding `addr` (its name, where there is no procfs to tell)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                span, *_, path = line.split(maxsplit=5)
                lo, hi = (int(x, 16) for x in span.split("-"))
                if lo <= addr < hi:
                    return path.strip()
    except OSError:
        pass
    return "torch's OpenMP runtime"


def num_threads() -> int:
    """The threads a launch may use: torch's intra-op count (torch.set_num_threads); 1 without OpenMP or after fork."""
    if _forked or runtime() is None:
        return 1
    return max(1, torch.get_num_threads())


def _after_fork() -> None:
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_after_fork)


def launch(fn, par, items: int, argv: int, work: int, min_work: int = MIN_WORK) -> None:
    """Items [0, items) of kernel `fn` (ctypes), on torch's threads through `par` (its k_par, or None: serially)
    when there are `min_work` units of work or more (`work` per item)."""
    if par is None or items * work < min_work:
        fn(0, items, argv)
    else:
        par(0, items, argv, num_threads())


# -- code ---------------------------------------------------------------------------------------------
def outline(module: ir.Module, kernel: ir.Function) -> ir.Function:
    """Add `<kernel>_body` and `<kernel>_par` (module docstring) for `kernel`; returns `<kernel>_par`."""
    name, argv_ty = kernel.name, kernel.args[2].type
    data_ty = ir.LiteralStructType([I64, I64, argv_ty])
    c64 = lambda v: ir.Constant(I64, v)  # noqa: E731
    c32 = lambda v: ir.Constant(I32, v)  # noqa: E731

    def declare(fname, ty):
        return module.globals.get(fname) or ir.Function(module, ty, fname)

    body_ty = ir.FunctionType(ir.VoidType(), [I8.as_pointer()])
    gomp = declare("GOMP_parallel", ir.FunctionType(ir.VoidType(), [body_ty.as_pointer(), I8.as_pointer(), I32, I32]))
    tid_fn = declare("omp_get_thread_num", ir.FunctionType(I32, []))
    nth_fn = declare("omp_get_num_threads", ir.FunctionType(I32, []))

    body = ir.Function(module, body_ty, f"{name}_body")
    body.linkage = "internal"
    b = ir.IRBuilder(body.append_basic_block("entry"))
    data = b.bitcast(body.args[0], data_ty.as_pointer())
    start, end, argv = (b.load(b.gep(data, [c32(0), c32(i)])) for i in range(3))
    tid, nth = b.sext(b.call(tid_fn, []), I64), b.sext(b.call(nth_fn, []), I64)
    n = b.sub(end, start)
    lo = b.add(start, b.sdiv(b.mul(n, tid), nth))
    hi = b.add(start, b.sdiv(b.mul(n, b.add(tid, c64(1))), nth))
    with b.if_then(b.icmp_signed("<", lo, hi)):
        b.call(kernel, [lo, hi, argv], attrs=("noinline",))  # one call per thread: inlining would only grow the code
    b.ret_void()

    par = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64, argv_ty, I32]), f"{name}_par")
    start, end, argv, threads = par.args
    b = ir.IRBuilder(par.append_basic_block("entry"))
    n = b.sub(end, start)
    wide = b.sext(threads, I64)
    team = b.trunc(b.select(b.icmp_signed("<", n, wide), n, wide), I32)  # no more threads than items
    slot = b.alloca(data_ty)
    with b.if_else(b.icmp_signed("<=", team, c32(1))) as (serial, threaded):
        with serial:
            b.call(kernel, [start, end, argv], attrs=("noinline",))
        with threaded:
            for i, v in enumerate((start, end, argv)):
                b.store(v, b.gep(slot, [c32(0), c32(i)]))
            b.call(gomp, [body, b.bitcast(slot, I8.as_pointer()), team, c32(0)])
    b.ret_void()
    return par
