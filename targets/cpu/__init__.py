"""The CPU target's building blocks: JIT and object cache, vector math, threading, library externs.

    jit.py        Engine / compile_module: llvmlite IR -> O3 object code -> ctypes functions
    cache.py      the on-disk cache (object code, extern choices), atomic writes
    mathlib.py    vectorised transcendentals emitted as LLVM IR (exp, log, tanh, erf, sin, pow, ...)
    parallel.py   run a (start, end, args...) kernel over a range on a thread pool, GIL released
    externs.py    matmul / linear / bmm / convolution through the fastest torch library path
"""
