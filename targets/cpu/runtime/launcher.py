"""mode="reduce-overhead": the steps of a static graph as JITed launchers, so that a call runs almost no Python.

    void seg(i64* env)   # env: frame, sgemm_, thread count, MKL_Set_Num_Threads_Local; argv of launch j

Consecutive steps that native code can run become one function `seg<i>` in the graph's own LLVM module
(so the on-disk cache keys it with the kernels, and small kernels may be inlined into it):
  - a JITed launch: a direct call of its kernel over all its items when the work is small, else a
    call of its `k_par` (parallel.py: GOMP_parallel on torch's OpenMP threads, the same threads MKL
    and oneDNN use, so launches next to library calls go parallel too);
  - an f32 `tn.mm` extern on static, unit-stride 2-D buffers: MKL's `sgemm_` (the BLAS torch.mm
    calls), through its address, writing the planned out buffer.
Every other step (a reference launch, any other extern, a derive) stays the Python step it was,
between two launchers. Output allocations (static) are hoisted to the front of the call. So the MLP
runs as: bind arguments, allocate its output, one ctypes call.

Addresses (the frame, sgemm_) are per process and per context: they come through env, never as
constants in the code, so the module text is the same in every process. The thread count is torch's
at each call (Threads, the executor's per-call hook, writes it into env).
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
from irc.ir.types import DYN

from ..codegen.vec import I32, I64
from ..libs import mm_rules
from . import parallel, steps

VOID = ir.VoidType()
F32 = ir.FloatType()
FRAME, SGEMM, THREADS, MKL_LOCAL, ARGV0 = range(5)  # env slots; then one argv per launch


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
    threaded: bool = False  # some launch may run on several threads
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


def _mm_native(st, stable: frozenset[int]) -> str | None:
    """None when this extern can be one sgemm_ call, else why not."""
    inner = [o for o in st.op.body.block.ops if not isinstance(o, memory.YieldOp)]
    if len(inner) != 1 or not isinstance(inner[0], tn.MmOp):
        return "extern other than mm"
    if sgemm_address() is None:
        return "no sgemm_ in torch's library"
    (m, k), (_, n) = (v.type.get_shape() for v in inner[0].operands)
    if st.results and not st.outs and DYN not in (m, k, n):  # bufferize's fresh result: the library allocates it
        path = mm_rules.mm_path(st.op, stable, m, k, n, unit_rows=True)
        return f"mm the default runs as {path}, which allocates its result (every mode keeps its library path)"
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
    unit_rows = m == 1 or k == 1 or bufs[0].strides[1].const == 1
    if (path := mm_rules.mm_path(st.op, stable, m, k, n, unit_rows)) != "aten":
        return f"mm the default runs as {path} (every mode keeps its library path)"
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
                if not isinstance(count, tuple):
                    why = "launch with runtime sizes"
                else:
                    p.threaded |= _threaded(compiled, ln, *count)
                    cur.append(("launch", i, p.launches))
                    p.launches += 1
                    continue
        elif st.kind == "extern":
            why = _mm_native(st, compiled.stable_args)
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
                _emit_launch(b, slot, mod, compiled, st, what[2])
        b.ret_void()
        names.append(fn.name)
    return names


def _launch_of(compiled, st):
    return next(ln for ln in compiled.launches if ln.step is st)


def _threaded(compiled, ln, items: int, work: int) -> bool:
    """Whether a static launch of `items` items runs through its k_par (else: one direct call)."""
    return parallel.runtime() is not None and items >= 2 and items * work >= compiled.min_work_for(ln)


def _emit_launch(b, slot, mod, compiled, st, j):
    """The call of launch j (env holds the launches' argv addresses from ARGV0 on)."""
    ln = _launch_of(compiled, st)
    kfn = mod.get_global(ln.fname)
    items, work = steps.counter(ln.plan, st.syms)
    argv = b.inttoptr(slot(ARGV0 + j), kfn.args[2].type)
    if items <= 0:
        return
    if not _threaded(compiled, ln, items, work):
        b.call(kfn, [ir.Constant(I64, 0), ir.Constant(I64, items), argv])
        return
    threads = b.trunc(slot(THREADS), I32)
    b.call(mod.get_global(f"{ln.fname}_par"), [ir.Constant(I64, 0), ir.Constant(I64, items), argv, threads])


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
    keep = [
        ctypes.c_char(ta.encode()),
        ctypes.c_char(tb.encode()),
        *map(ctypes.c_int32, (n, m, k)),
        ctypes.c_float(1.0),
        ctypes.c_int32(lda),
        ctypes.c_int32(ldb),
        ctypes.c_float(0.0),
        ctypes.c_int32(ldc),
    ]
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
    args = [
        const(i8, ord(ta)),
        const(i8, ord(tb)),
        const(I32, n),
        const(I32, m),
        const(I32, k),
        const(F32, 1.0),
        addr(bb),
        const(I32, lda),
        addr(a),
        const(I32, ldb),
        const(F32, 0.0),
        addr(c),
        const(I32, ldc),
    ]
    ty = ir.FunctionType(VOID, [x.type for x in args])
    threads = compiled.mm_threads.get(i)  # max-autotune's MKL thread count for this product
    if threads:
        local = b.inttoptr(slot(MKL_LOCAL), ir.FunctionType(I32, [I32]).as_pointer())
        prev = b.call(local, [ir.Constant(I32, threads)])
    b.call(b.inttoptr(slot(SGEMM), ty.as_pointer()), args)
    if threads:
        b.call(local, [prev])


# -- a context's launchers ----------------------------------------------------------------------------
class Threads:
    """The executor's per-call hook for launchers that may run kernels on several threads: claim() before the
    calls writes torch's thread count at that moment into their env, so that torch.set_num_threads (or a
    fork) applies from the next call on, as it does to torch's own ops. Nothing else is claimed: a context
    is one call's, and every calling thread gets its own OpenMP team."""

    def __init__(self, env):
        self.env = env

    def claim(self) -> None:
        self.env[THREADS] = parallel.num_threads()


def bind(compiled, cx, bound: dict) -> tuple[list, Threads | None]:
    """A context's calls under reduce-overhead (its launchers, in compiled.lib, and the Python steps between
    them) and their per-call hook (None: they run every kernel on the calling thread). `bound`: step index
    -> the context's callable for that step, or None."""
    p = compiled.launch_plan
    env = [0] * (ARGV0 + p.launches)
    env[FRAME], env[SGEMM] = ctypes.addressof(cx.frame), sgemm_address() or 0
    env[THREADS], env[MKL_LOCAL] = 1, blas().get("MKL_Set_Num_Threads_Local", 0)
    for seg in p.segments:
        for what in seg:
            if what[0] == "launch":
                env[ARGV0 + what[2]] = cx.argv[what[1]]
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
    return calls, Threads(env) if p.threaded else None


def describe(compiled) -> list[str]:
    """What reduce-overhead did for the compile report."""
    if compiled.mode == "default":
        return []
    p = compiled.launch_plan
    if p is None:
        return ["no launcher: the graph has runtime sizes (each call binds them in Python)"]
    native = sum(len(seg) for seg in p.segments)
    threads = " (large launches on torch's OpenMP threads)" if p.threaded else ""
    notes = [
        f"{len(p.segments)} JITed launcher(s) run {native} of {len(compiled.g.steps)} steps{threads}; "
        f"{p.python_steps} stay Python steps"
    ]
    notes += [f"python step: {why}" for why in p.reasons]
    return notes
