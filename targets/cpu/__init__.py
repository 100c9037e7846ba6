"""The CPU target's building blocks: JIT and object cache, vector math, threading, library externs.

    jit.py          Engine / compile_module: llvmlite IR -> O3 object code -> ctypes functions
    cache.py        the on-disk cache (object code, extern choices), atomic writes
    vec.py          V: lane-wise IRBuilder helpers for any float type, scalar or vector
    mathlib.py      vectorised transcendentals emitted as LLVM IR (exp, log, tanh, erf, sin, pow, ...)
                    (implementations in mathlib_core.py and mathlib_special.py)
    parallel.py     parallel_for: a (start, end, args...) kernel over a range on a thread pool
    nativepool.py   the pool's native dispatch (JITed spin/futex launch, GIL-free)
    externs.py      matmul / linear / bmm / convolution through the fastest torch library path
"""
