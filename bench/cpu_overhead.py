"""CPU runtime figures: per-launch overhead of kernel calls, serial and on torch's threads, the speed-up of a
streaming kernel on the threads, and GFLOP/s of each extern path (aten / oneDNN / oneDNN prepacked) on
MLP-like linear shapes.

    .venv/bin/python -m irc.bench.cpu_overhead [--externs-only | --no-externs]

Medians over many launches; other work on the machine makes single samples noisy.
"""

import ctypes
import statistics
import sys
import time

import torch
from llvmlite import ir

from irc.targets import timing
from irc.targets.cpu.libs import externs
from irc.targets.cpu.runtime import jit, parallel

I64, F32 = ir.IntType(64), ir.FloatType()


def _kernels():
    """{name: (kernel, its k_par)}: null(start, end, p) returns at once; stream(start, end, x): x[i] = x[i] / 2 + 1
    (a fixed point at 2, so repeating it changes nothing). k_par: parallel.outline, on torch's OpenMP threads."""
    m = ir.Module()
    null = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, I64, F32.as_pointer()]), "null")
    ir.IRBuilder(null.append_basic_block()).ret_void()
    f = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, I64, F32.as_pointer()]), "stream")
    s, e, x = f.args
    entry, head, body, done = (f.append_basic_block(n) for n in ("entry", "head", "body", "done"))
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(s, entry)
    b.cbranch(b.icmp_signed("<", i, e), body, done)
    b.position_at_end(body)
    px = b.gep(x, [i])
    b.store(b.fadd(b.fmul(b.load(px), ir.Constant(F32, 0.5)), ir.Constant(F32, 1.0)), px)
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    for k in (null, f):
        parallel.outline(m, k)
    lib = jit.compile_module(m)
    sig = (None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
    return {
        name: (lib.function(name, *sig), lib.function(f"{name}_par", *parallel.PAR_SIG)) for name in ("null", "stream")
    }


def median_us(fn, reps: int) -> float:
    for _ in range(min(reps, 100)):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1e3


def main():
    if parallel.runtime() is None:
        sys.exit("no OpenMP runtime in this torch: kernels run on the calling thread")
    kernels = _kernels()
    (null, null_par), (stream, stream_par) = kernels["null"], kernels["stream"]
    threads = parallel.num_threads()
    p = ctypes.c_void_p(0)
    print(f"threads: {threads}; medians of repeated launches (machine shared, so noisy)")
    rows = [
        ("ctypes call, no runtime", lambda: null(0, 1024, p)),
        ("k_par, one thread (a direct call)", lambda: null_par(0, 1024, p, 1)),
        (f"k_par, {threads} threads (GOMP_parallel)", lambda: null_par(0, 1024, p, threads)),
    ]
    for name, fn in rows:
        print(f"  {name:40s} {median_us(fn, 20000):7.2f} us")
    for n in (1 << 12, 1 << 15, 1 << 18, 1 << 22):
        x = torch.full((n,), 2.0)
        reps = max(20, min(5000, (1 << 24) // n))
        one = median_us(lambda: stream(0, n, x.data_ptr()), reps)
        par = median_us(lambda: stream_par(0, n, x.data_ptr(), threads), reps)
        print(f"  stream n={n:8d}: 1 thread {one:9.2f} us, {threads} threads {par:9.2f} us ({one / par:.2f}x)")


def bench_externs(shapes=((32, 1024, 1024), (1024, 1024, 1024)), epilogues=(None, "relu", "gelu")):
    """GFLOP/s per path (medians of interleaved runs, so load from other processes hits all paths alike)."""
    for threads in sorted({1, parallel.num_threads()}):
        torch.set_num_threads(threads)
        for m, k, n in shapes:
            x, w, b = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
            for ep in epilogues:
                kern = externs.LinearKernel(w, b, ep, constant=True)
                times = timing.measure({p: (lambda p=p: kern.run(x, p)) for p in kern.paths()}, reps=15, budget_s=3)
                gf = {p: 2 * m * k * n / t / 1e9 for p, t in times.items()}
                cells = "  ".join(f"{p} {g:6.1f}" for p, g in gf.items())
                print(f"  threads={threads} {m}x{k}x{n} +bias{'+' + ep if ep else ''}: GFLOP/s {cells}")
        x = torch.randn(8, 64, 56, 56)
        for layout in ("nchw", "channels_last"):
            xi = x.contiguous(memory_format=torch.channels_last) if layout == "channels_last" else x
            conv = externs.ConvKernel(torch.randn(64, 64, 3, 3), torch.randn(64), 1, 1, epilogue="relu")
            times = timing.measure({p: (lambda p=p: conv.run(xi, p)) for p in conv.paths()}, reps=9, budget_s=3)
            flops = 2 * 8 * 64 * 56 * 56 * 64 * 9
            cells = "  ".join(f"{p} {flops / t / 1e9:6.1f}" for p, t in times.items())
            print(f"  threads={threads} conv3x3 8x64x56x56 {layout}+bias+relu: GFLOP/s {cells}")
    torch.set_num_threads(parallel.num_threads())


if __name__ == "__main__":
    if "--externs-only" not in sys.argv:
        main()
    if "--no-externs" not in sys.argv:
        bench_externs()
