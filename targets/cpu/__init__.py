"""The CPU target: mem-stage graphs as llvmlite-JITed, vectorised, multi-threaded kernels.

target.py   CpuTarget: the target's rules for the passes (Rules), compile (Compiled, tune, Executor), choose
codegen/    one loop.nest -> LLVM IR: the emitter, the op table, vectors, loads and stores, reductions, tiles,
            the math library
runtime/    running a graph: the launch plan, what is built once (Compiled), the executor, the generated call,
            launchers, threads, allocation, the JIT, max-autotune's measurements
libs/       torch's libraries: matrix products and convolutions (externs), mem.extern regions as calls, the
            rules that pick a library path before any call, convolution timings
"""
