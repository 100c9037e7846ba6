"""mode="reduce-overhead": the steps of a static graph as JITed launchers, so that a call runs almost no Python.

    void seg(i64* env)   # env: frame, sgemm_, pool ctl, task, tramp_1, launch; argv of launch j; parts of j

Consecutive steps that native code can run become one function `seg<i>` in the graph's own LLVM module
(so the on-disk cache keys it with the kernels, and small kernels may be inlined into it):
  - a JITed launch: a direct call of its kernel over all its items when the work is small, else one
    task published to the native pool (nativepool.py, the same split as parallel.plan), in graphs
    without library externs (where those run, large launches keep the Python pool that blocks);
  - an f32 `tn.mm` extern on static, unit-stride 2-D buffers: MKL's `sgemm_` (the BLAS torch.mm
    calls), through its address, writing the planned out buffer.
Every other step (a reference launch, any other extern, a derive) stays the Python step it was,
between two launchers. Output allocations (static) are hoisted to the front of the call. So the MLP
runs as: bind arguments, allocate its output, one ctypes call.

Addresses (the frame, sgemm_, the pool) are per process and per context: they come through env,
never as constants in the code, so the module text is the same in every process.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass, field

import torch
from llvmlite import ir

from irc.dialects import memory
from irc.dialects import tensor as tn

from . import nativepool, parallel, steps
from .vec import I32, I64

VOID = ir.VoidType()
F32 = ir.FloatType()
FRAME, SGEMM, CTL, TASK, TRAMP, POOL_LAUNCH, MKL_LOCAL, ARGV0 = range(8)  # env slots; then argv, parts per launch


@functools.cache
def blas() -> dict[str, int]:
    """Addresses in torch's own library: MKL's sgemm_ (LP64, Fortran convention) and MKL_Set_Num_Threads_Local (the C
    one: the lowercase symbol is the Fortran interface, taking a pointer)."""
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    out = {}
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return out
    for name in ("sgemm_", "MKL_Set_Num_Threads_Local"):
        try:
            out[name] = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except AttributeError:
            pass
    return out


def sgemm_address() -> int | None:
    return blas().get("sgemm_")


@dataclass
class Plan:
    """Who runs each step: a launcher segment, a Python step, or the hoisted allocations."""

    segments: list[list[tuple]] = field(default_factory=list)  # per segment: ("launch", i, j) | ("mm", i)
    order: list[tuple] = field(default_factory=list)  # ("segment", s) | ("step", i) | ("alloc", i), in call order
    launches: int = 0  # env slots for argv addresses
    pooled: bool = False  # some launch goes to the native pool
    python_steps: int = 0
    reasons: list[str] = field(default_factory=list)  # why a step stays Python (distinct)


def _mm_layout(rows: int, cols: int, s0: int, s1: int):
    """(trans, ld) describing X[rows, cols] (row-major logical, strides s0, s1) transposed, column-major."""
    if s1 == 1 or cols == 1:
        ld = s0 if rows > 1 else max(1, cols)
        return ("N", ld) if ld >= max(1, cols) else None
    if s0 == 1 or rows == 1:
        ld = s1 if cols > 1 else max(1, rows)
        return ("T", ld) if ld >= max(1, rows) else None
    return None


def _mm_native(st) -> str | None:
    """None when this extern can be one sgemm_ call, else why not."""
    inner = [o for o in st.op.body.block.ops if not isinstance(o, memory.YieldOp)]
    if len(inner) != 1 or not isinstance(inner[0], tn.MmOp):
        return "extern other than mm"
    if sgemm_address() is None:
        return "no sgemm_ in torch's library"
    if len(st.outs) != 1 or st.results or len(st.ins) != 2:
        return "mm without a planned out buffer"
    bufs = [*st.ins, st.outs[0]]
    if any(b.dtype != torch.float32 or len(b.sizes) != 2 for b in bufs):
        return "mm not on 2-D f32 buffers"
    if not all(q.static for b in bufs for q in (*b.sizes, *b.strides, b.offset)):
        return "mm with runtime sizes"
    (m, k), (_, n) = (s.const for s in bufs[0].sizes), (s.const for s in bufs[1].sizes)
    if 0 in (m, n, k) or max(m, n, k) >= 2**31:
        return "mm with an empty or huge dim"
    lay = [_mm_layout(*(s.const for s in b.sizes), *(s.const for s in b.strides)) for b in bufs]
    if None in lay or lay[2][0] != "N":
        return "mm operand without a unit stride"
    return None


def plan(compiled) -> Plan:
    """Decide, per step of compiled.g (a static graph, its kernels emitted), who runs it."""
    p, cur, g = Plan(), [], compiled.g
    launches = iter(compiled.launches)

    def close():
        if cur:
            p.order.append(("segment", len(p.segments)))
            p.segments.append(list(cur))
            cur.clear()

    for i, st in enumerate(g.steps):
        ln = next(launches) if st.kind == "launch" else None
        why = None
        if st.kind == "alloc" and all(q.static for q in (*g.roots[st.root].buf.sizes, *g.roots[st.root].buf.strides)):
            p.order.insert(0, ("alloc", i))  # a fresh static output: nothing before it refers to it
            continue
        if st.kind == "launch":
            if ln.fname is None:
                why = "kernel on the reference evaluator"
            else:
                count = steps.counter(ln.plan, st.syms)
                mw = compiled.min_work_for(ln)
                if not isinstance(count, tuple):
                    why = "launch with runtime sizes"
                elif count[0] * count[1] >= mw and compiled.has_externs:
                    why = "large launch in a graph with library externs (blocking pool)"
                elif count[0] * count[1] >= mw and not (parallel.USE_NATIVE and nativepool.supported()):
                    why = "large launch without the native pool"
                else:
                    if count[0] * count[1] >= mw:
                        p.pooled = True
                    cur.append(("launch", i, p.launches))
                    p.launches += 1
                    continue
        elif st.kind == "extern":
            why = _mm_native(st)
            if why is None:
                cur.append(("mm", i))
                continue
        else:
            why = f"{st.kind} step"
        close()
        p.order.append(("step", i))
        p.python_steps += 1
        if why not in p.reasons:
            p.reasons.append(why)
    close()
    return p


# -- code -------------------------------------------------------------------------------------------
def emit(compiled, mod: ir.Module, p: Plan) -> list[str]:
    """Add `seg<i>` for each segment of `p` to `mod` (which holds the kernels); their names."""
    names = []
    for s, seg in enumerate(p.segments):
        fn = ir.Function(mod, ir.FunctionType(VOID, [I64.as_pointer()]), f"seg{s}")
        fn.args[0].add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        env = fn.args[0]

        def slot(k, b=b, env=env):
            return b.load(b.gep(env, [ir.Constant(I64, k)]))

        for what in seg:
            st = compiled.g.steps[what[1]]
            if what[0] == "mm":
                _emit_mm(b, slot, st, compiled, what[1])
            else:
                _emit_launch(b, slot, mod, compiled, st, what[2], p.launches)
        b.ret_void()
        names.append(fn.name)
    return names


def _launch_of(compiled, st):
    return next(ln for ln in compiled.launches if ln.step is st)


def _emit_launch(b, slot, mod, compiled, st, j, launches):
    """The call of launch j (of the plan's `launches`: env holds their argv addresses, then their parts)."""
    ln = _launch_of(compiled, st)
    kfn = mod.get_global(ln.fname)
    items, work = steps.counter(ln.plan, st.syms)
    argv = b.inttoptr(slot(ARGV0 + j), kfn.args[2].type)
    if items <= 0:
        return
    if items * work < compiled.min_work_for(ln):
        b.call(kfn, [ir.Constant(I64, 0), ir.Constant(I64, items), argv])
        return
    # the native pool: publish (tramp_1, fn, argv of the task, start, end, parts, align, pad, argv) and launch;
    # parts comes from the context (the pool's size), in env after the argv slots
    task = b.inttoptr(slot(TASK), I64.as_pointer())

    def put(k, v):
        b.store(v, b.gep(task, [ir.Constant(I64, k)]))

    put(0, slot(TRAMP))
    put(1, b.ptrtoint(kfn, I64))
    put(2, b.ptrtoint(b.gep(task, [ir.Constant(I64, 8)]), I64))
    put(3, ir.Constant(I64, 0))
    put(4, ir.Constant(I64, items))
    put(5, slot(ARGV0 + launches + j))
    put(6, ir.Constant(I64, 1))
    put(8, slot(ARGV0 + j))
    launch_ty = ir.FunctionType(VOID, [I32.as_pointer(), I64.as_pointer()])
    b.call(b.inttoptr(slot(POOL_LAUNCH), launch_ty.as_pointer()), [b.inttoptr(slot(CTL), I32.as_pointer()), task])


def mm_args(st) -> tuple:
    """sgemm_'s (transa, transb, m, n, k, lda, ldb, ldc) for C = A @ B row-major: C^T = B^T A^T column-major."""
    a, bb, c = st.ins[0], st.ins[1], st.outs[0]
    (m, k), n = (s.const for s in a.sizes), bb.sizes[1].const
    ta, lda = _mm_layout(k, n, *(s.const for s in bb.strides))  # B^T as sgemm's first operand
    tb, ldb = _mm_layout(m, k, *(s.const for s in a.strides))
    _, ldc = _mm_layout(m, n, *(s.const for s in c.strides))
    return ta, tb, n, m, k, lda, ldb, ldc


def sgemm_call(st, a, b, c, threads: int | None = None):
    """A Python callable making the very sgemm_ call the launcher makes, on tensors a, b, c (for measuring);
    `threads`: MKL's thread count for this call (mkl_set_num_threads_local), None: MKL's own."""
    ta, tb, n, m, k, lda, ldb, ldc = mm_args(st)
    P = ctypes.c_void_p
    fn = ctypes.CFUNCTYPE(None, *[P] * 13)(sgemm_address())
    keep = [ctypes.c_char(ta.encode()), ctypes.c_char(tb.encode()), *map(ctypes.c_int32, (n, m, k)), ctypes.c_float(1.0),
            ctypes.c_int32(lda), ctypes.c_int32(ldb), ctypes.c_float(0.0), ctypes.c_int32(ldc)]  # fmt: skip
    r = [ctypes.addressof(x) for x in keep]
    args = (*r[:6], b.data_ptr(), r[6], a.data_ptr(), r[7], r[8], c.data_ptr(), r[9])
    local = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(blas()["MKL_Set_Num_Threads_Local"]) if threads else None

    def call(keep=keep):  # keep: the argument cells live as long as the callable
        if local is None:
            return fn(*args)
        prev = local(threads)
        fn(*args)
        local(prev)

    return call


def _emit_mm(b, slot, st, compiled, i):
    a, bb, c = st.ins[0], st.ins[1], st.outs[0]
    ta, tb, n, m, k, lda, ldb, ldc = mm_args(st)
    frame = b.inttoptr(slot(FRAME), I64.as_pointer())

    def addr(buf):  # the root's address (its cell) plus the static offset
        base = b.load(b.gep(frame, [ir.Constant(I64, compiled.g.roots[buf.root].cell)]))
        return b.inttoptr(b.add(base, ir.Constant(I64, buf.offset.const * 4)), F32.as_pointer())

    def const(ty, v):
        p = b.alloca(ty)
        b.store(ir.Constant(ty, v), p)
        return p

    i8 = ir.IntType(8)
    args = [const(i8, ord(ta)), const(i8, ord(tb)), const(I32, n), const(I32, m), const(I32, k), const(F32, 1.0),
            addr(bb), const(I32, lda), addr(a), const(I32, ldb), const(F32, 0.0), addr(c), const(I32, ldc)]  # fmt: skip
    ty = ir.FunctionType(VOID, [x.type for x in args])
    threads = compiled.mm_threads.get(i)  # max-autotune's MKL thread count for this product
    if threads:
        local = b.inttoptr(slot(MKL_LOCAL), ir.FunctionType(I32, [I32]).as_pointer())
        prev = b.call(local, [ir.Constant(I32, threads)])
    b.call(b.inttoptr(slot(SGEMM), ty.as_pointer()), args)
    if threads:
        b.call(local, [prev])


# -- a context's launchers ----------------------------------------------------------------------------
class PoolGuard:
    """One call at a time publishes the launchers' tasks, on the pool they were bound to."""

    def __init__(self, pool):
        self.pool = pool
        self.release = pool._busy.release

    def claim(self) -> bool:
        """True (the pool held) when the pool is still this process's current one and idle."""
        return parallel.native_pool(parallel.num_threads()) is self.pool and self.pool._busy.acquire(blocking=False)


def bind(compiled, cx, bound: dict) -> tuple[list, PoolGuard | None]:
    """A context's calls under reduce-overhead (its launchers, in compiled.lib, and the Python steps between
    them) and the guard of the native pool they use (None: they use none). `bound`: step index -> the
    context's callable for that step, or None."""
    p = compiled.launch_plan
    pool = parallel.native_pool(parallel.num_threads()) if p.pooled else None
    if p.pooled and pool is None:
        raise RuntimeError("no native pool")
    env = [0] * (ARGV0 + 2 * p.launches)
    env[FRAME], env[SGEMM] = ctypes.addressof(cx.frame), sgemm_address() or 0
    env[MKL_LOCAL] = blas().get("MKL_Set_Num_Threads_Local", 0)
    if pool is not None:
        env[CTL], env[TASK] = pool._ptrs
        env[TRAMP], env[POOL_LAUNCH] = pool._tramps[1], pool._lib.address("launch")
    for seg in p.segments:
        for what in seg:
            if what[0] == "launch":
                st = compiled.g.steps[what[1]]
                env[ARGV0 + what[2]] = cx.argv[what[1]]
                ln = _launch_of(compiled, st)
                items, work = steps.counter(ln.plan, st.syms)
                parts, _ = parallel._split(items, parallel.num_threads(), work, compiled.min_work_for(ln), 1)
                env[ARGV0 + p.launches + what[2]] = parts
    env = (ctypes.c_int64 * len(env))(*env)
    cx.keep.append(env)
    addr = ctypes.addressof(env)
    segs = [compiled.lib.function(name, None, ctypes.c_void_p) for name in compiled.segments]
    calls = []
    for kind, i in p.order:
        if kind == "segment":
            calls.append(functools.partial(segs[i], addr))
        elif bound.get(i) is not None:
            calls.append(bound[i])
    return calls, PoolGuard(pool) if pool is not None else None


def describe(compiled) -> list[str]:
    """What reduce-overhead did for the compile report."""
    if compiled.mode == "default":
        return []
    p = compiled.launch_plan
    if p is None:
        return ["no launcher: the graph has runtime sizes (each call binds them in Python)"]
    native = sum(len(seg) for seg in p.segments)
    notes = [f"{len(p.segments)} JITed launcher(s) run {native} of {len(compiled.g.steps)} steps"
             f"{' (the native pool for large launches)' if p.pooled else ''}; {p.python_steps} stay Python steps"]
    notes += [f"python step: {why}" for why in p.reasons]
    return notes
