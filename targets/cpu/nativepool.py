"""A thread pool whose dispatch runs in JITed native code: launches cost ~1-2 us, not a GIL round trip.

Each worker is a Python thread that calls `worker(ctl, task, id)` once; that call never returns
while the pool lives (ctypes dropped the GIL). A launch is one ctypes call `launch(...)` that
publishes the task, bumps a generation counter, wakes sleepers, runs chunk 0 itself and spins until
the other chunks are done. Workers spin on the generation (with `pause`) for a while after each task,
as OpenMP does, then sleep on a futex, so an idle pool costs no CPU. Linux x86-64 only (raw futex
syscalls); parallel.py falls back to its Python pool elsewhere.

Kernels are `void k(i64 start, i64 end, a1, ..., an)` with integer or pointer arguments (each passes
as one i64 register); trampolines per arity load them from an i64 array.
"""

from __future__ import annotations

import ctypes
import platform
import struct
import sys
import threading

from llvmlite import ir

from .vec import I32, I64

MAX_ARGS = 16
SPINS = 4000  # pause loops (~100-200 us) before a worker sleeps on the futex
MAIN_SPINS = 400  # the launching thread spins less: on a loaded machine its core is better given away
GEN, SLEEPERS, DONE, STOP, WAITER = 0, 16, 32, 48, 56  # i32 slots; the busy ones a cache line apart
_SYS_FUTEX, _WAIT, _WAKE = 202, 128, 129  # FUTEX_*_PRIVATE
_TASK = ("tramp", "fn", "argv", "start", "end", "parts", "align")
_CINTS = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_uint64, ctypes.c_size_t)


def supported() -> bool:
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _module() -> ir.Module:
    m = ir.Module("irc_nativepool")
    p8, p32, p64 = ir.IntType(8).as_pointer(), I32.as_pointer(), I64.as_pointer()
    syscall = ir.Function(m, ir.FunctionType(I64, [I64], var_arg=True), "syscall")
    pause = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
    c32, c64 = (lambda v: ir.Constant(I32, v)), (lambda v: ir.Constant(I64, v))
    tramp_ty = ir.FunctionType(ir.VoidType(), [p8, I64, I64, p64])

    noop = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, I64]), "noop")
    ir.IRBuilder(noop.append_basic_block()).ret_void()
    for n in range(MAX_ARGS + 1):  # tramp_n(fn, start, end, argv): fn(start, end, argv[0..n))
        f = ir.Function(m, tramp_ty, f"tramp_{n}")
        b = ir.IRBuilder(f.append_basic_block())
        fn, s, e, argv = f.args
        kty = ir.FunctionType(ir.VoidType(), [I64] * (n + 2))
        args = [b.load(b.gep(argv, [c64(i)])) for i in range(n)]
        b.call(b.bitcast(fn, kty.as_pointer()), [s, e, *args])
        b.ret_void()

    def slot(b, ctl, i):
        return b.gep(ctl, [c64(i)])

    def field(b, task, name):
        return b.gep(task, [c64(_TASK.index(name))])

    def bounds(b, task, k):
        """Chunk k of the published task, exactly as parallel.plan() splits it."""
        start, end, parts, align = (b.load(field(b, task, x)) for x in ("start", "end", "parts", "align"))
        n = b.sub(end, start)
        units = b.sdiv(b.add(n, b.sub(align, c64(1))), align)

        def at(i):
            off = b.mul(b.sdiv(b.mul(units, i), parts), align)
            return b.add(start, b.select(b.icmp_signed("<", off, n), off, n))

        return at(k), at(b.add(k, c64(1)))

    def run_chunk(b, task, k):
        s, e = bounds(b, task, k)
        tramp = b.inttoptr(b.load(field(b, task, "tramp")), tramp_ty.as_pointer())
        fn = b.inttoptr(b.load(field(b, task, "fn")), p8)
        argv = b.inttoptr(b.load(field(b, task, "argv")), p64)
        b.call(tramp, [fn, s, e, argv])

    # worker(ctl, task, id, seen): serve launches until STOP
    w = ir.Function(m, ir.FunctionType(ir.VoidType(), [p32, p64, I64, I32]), "worker")
    ctl, task, wid, seen0 = w.args
    entry, wait, spin, sleep, go, work, stop = (w.append_basic_block(x) for x in
        ("entry", "wait", "spin", "sleep", "go", "work", "stop"))  # fmt: skip
    b = ir.IRBuilder(entry)
    seen_p, spins_p = b.alloca(I32), b.alloca(I32)
    b.store(seen0, seen_p)
    b.store(c32(0), spins_p)
    b.branch(wait)
    b.position_at_end(wait)
    g = b.load_atomic(slot(b, ctl, GEN), "seq_cst", 4)
    seen = b.load(seen_p)
    b.cbranch(b.icmp_unsigned("!=", g, seen), go, spin)
    b.position_at_end(spin)
    stopping = b.icmp_unsigned("!=", b.load_atomic(slot(b, ctl, STOP), "seq_cst", 4), c32(0))
    spins = b.add(b.load(spins_p), c32(1))
    b.store(spins, spins_p)
    with b.if_then(b.icmp_unsigned("<", spins, c32(SPINS))):
        b.call(pause, [])
    b.cbranch(stopping, stop, sleep)
    b.position_at_end(sleep)
    with b.if_then(b.icmp_unsigned(">=", spins, c32(SPINS))):
        b.atomic_rmw("add", slot(b, ctl, SLEEPERS), c32(1), "seq_cst")
        # the kernel re-checks GEN == seen atomically: a launch after our check wakes us or fails the wait
        b.call(syscall, [c64(_SYS_FUTEX), slot(b, ctl, GEN), c64(_WAIT), b.zext(seen, I64), c64(0)])
        b.atomic_rmw("sub", slot(b, ctl, SLEEPERS), c32(1), "seq_cst")
        b.store(c32(0), spins_p)
    b.branch(wait)
    b.position_at_end(go)
    b.store(g, seen_p)
    b.store(c32(0), spins_p)
    b.cbranch(b.icmp_signed("<", wid, b.load(field(b, task, "parts"))), work, wait)
    b.position_at_end(work)
    run_chunk(b, task, wid)
    b.atomic_rmw("add", slot(b, ctl, DONE), c32(1), "seq_cst")
    with b.if_then(b.icmp_unsigned("!=", b.load_atomic(slot(b, ctl, WAITER), "seq_cst", 4), c32(0))):
        b.call(syscall, [c64(_SYS_FUTEX), slot(b, ctl, DONE), c64(_WAKE), c64(1)])
    b.branch(wait)
    b.position_at_end(stop)
    b.ret_void()

    # launch(ctl, task): run the task Python wrote into `task` (fields _TASK, then the arguments)
    la = ir.Function(m, ir.FunctionType(ir.VoidType(), [p32, p64]), "launch")
    ctl, task = la.args
    b = ir.IRBuilder(la.append_basic_block("entry"))
    b.store_atomic(c32(0), slot(b, ctl, DONE), "seq_cst", 4)
    b.atomic_rmw("add", slot(b, ctl, GEN), c32(1), "seq_cst")
    with b.if_then(b.icmp_unsigned("!=", b.load_atomic(slot(b, ctl, SLEEPERS), "seq_cst", 4), c32(0))):
        b.call(syscall, [c64(_SYS_FUTEX), slot(b, ctl, GEN), c64(_WAKE), c64(2**31 - 1)])
    run_chunk(b, task, c64(0))
    want = b.trunc(b.sub(b.load(field(b, task, "parts")), c64(1)), I32)
    loop, body, done = (la.append_basic_block(x) for x in ("loop", "body", "done"))
    pre = b.block
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I32)
    i.add_incoming(c32(0), pre)
    finished = b.icmp_unsigned("==", b.load_atomic(slot(b, ctl, DONE), "seq_cst", 4), want)
    b.cbranch(finished, done, body)
    b.position_at_end(body)
    with b.if_else(b.icmp_unsigned("<", i, c32(MAIN_SPINS))) as (spin_more, block):
        with spin_more:
            b.call(pause, [])
        with block:  # a worker may have lost its core: sleep until the last one finishes
            b.store_atomic(c32(1), slot(b, ctl, WAITER), "seq_cst", 4)
            d = b.load_atomic(slot(b, ctl, DONE), "seq_cst", 4)
            with b.if_then(b.icmp_unsigned("!=", d, want)):
                b.call(syscall, [c64(_SYS_FUTEX), slot(b, ctl, DONE), c64(_WAIT), b.zext(d, I64), c64(0)])
    i.add_incoming(b.add(i, c32(1)), b.block)
    b.branch(loop)
    b.position_at_end(done)
    b.store_atomic(c32(0), slot(b, ctl, WAITER), "seq_cst", 4)
    b.ret_void()
    return m


class NativePool:
    """`size` - 1 native workers plus the caller; same contract as parallel.Pool.run."""

    def __init__(self, size: int):
        from .jit import compile_module

        lib = compile_module(_module())
        self.size = size
        self._lib = lib
        self._ctl = (ctypes.c_int32 * 64)()
        self._task = (ctypes.c_int64 * (8 + MAX_ARGS))()  # _TASK fields, a pad word, then the arguments
        self._task_mv = memoryview(self._task).cast("B")
        self._argv = ctypes.addressof(self._task) + 64
        self._tramps = [lib.address(f"tramp_{n}") for n in range(MAX_ARGS + 1)]
        self._fmts = [struct.Struct(f"<7q8x{n}q") for n in range(MAX_ARGS + 1)]
        self._launch = lib.function("launch", None, ctypes.c_void_p, ctypes.c_void_p)
        worker = lib.function("worker", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32)
        self._busy = threading.Lock()
        ctl, task = ctypes.addressof(self._ctl), ctypes.addressof(self._task)
        self._ptrs = (ctl, task)
        self._threads = [threading.Thread(target=worker, args=(ctl, task, i, 0), daemon=True, name=f"irc-native-{i}")
                         for i in range(1, size)]  # fmt: skip
        for t in self._threads:
            t.start()

    @staticmethod
    def _addr(fn) -> int:
        addr = getattr(fn, "_irc_addr", None)
        if addr is None:
            addr = ctypes.cast(fn, ctypes.c_void_p).value
            fn._irc_addr = addr
        return addr

    def run_range(self, fn, start: int, end: int, parts: int, align: int, args: tuple) -> bool:
        """Run fn over [start, end) in `parts` chunks; False (nothing run) when busy or not expressible."""
        n = len(args)
        if n > MAX_ARGS or parts > self.size or not self._busy.acquire(blocking=False):
            return False
        try:
            head = (self._tramps[n], self._addr(fn), self._argv, start, end, parts, align)
            try:  # the common case: plain ints (addresses); one pack writes the whole task
                self._fmts[n].pack_into(self._task_mv, 0, *head, *args)
            except struct.error:
                vals = [a.value if isinstance(a, _CINTS) else a for a in args]
                if not all(isinstance(v, int) or v is None for v in vals):
                    return False  # floats and objects: the Python pool (and ctypes) handle them
                self._fmts[n].pack_into(self._task_mv, 0, *head, *[v or 0 for v in vals])
            self._launch(*self._ptrs)
            return True
        finally:
            self._busy.release()

    def close(self) -> None:
        ctypes.c_int32.from_address(ctypes.addressof(self._ctl) + 4 * STOP).value = 1
        self._launch_noop()
        for t in self._threads:
            t.join(timeout=5)

    def _launch_noop(self) -> None:
        # bump GEN (and wake sleepers) with a zero-length task so workers see STOP promptly
        self._fmts[0].pack_into(self._task_mv, 0, self._tramps[0], self._lib.address("noop"), self._argv, 0, 0, 1, 1)
        self._launch(*self._ptrs)
