"""The CPU target: mem-stage graphs as llvmlite-JITed, vectorised, multi-threaded kernels.

    program.py      Program(module, args, mode=...): the entry, an executor of a graph it compiles (and tunes)
    compiled.py     Compiled: what is built once (launches specialised in their variants, the JITed module, launch plan)
    executor.py     Executor: runs calls of a Compiled (pooled contexts, argument binding and checks, results)
    steps.py        what one call runs: the frame of cells, roots, alloc/derive/extern/launch steps
    call_source.py  a call written out as one generated Python function (what the executor runs by default)
    launcher.py     mode="reduce-overhead": runs of steps as JITed launchers (kernels, sgemm_, torch's threads)
    autotune.py     mode="max-autotune": per launch, vector width, tile and serial/parallel measured (Choices), kept on disk
    graph.py        the planner: @main as roots, cells (runtime integers) and steps; ArgSpec (what code assumes)
    emit.py         one loop.nest, specialised per launch, as `void k(start, end, argv)`: loops, lanes, reductions
    access.py       loads and stores: vector, broadcast, gather, masked, guarded (clamped) addresses
    ops.py          the op table: xDSL arith/math op class -> IRBuilder code (any width)
    types.py        compute and storage types, conversions (f16/bf16 in f32, bool as a byte)
    reduce.py       reduction identities, combines, horizontal combine
    affine.py       linear forms over runtime cells, bounds of affine maps (what proves a load in bounds)
    ivals.py        index arithmetic that folds ints and broadcasts vectors
    extern_ops.py   mem.extern regions -> library calls (mm, bmm, conv, reshape) or the reference
    alloc.py        buffers: huge pages, recycled when their storage dies
    listing.py      `irc-opt -t llvm`: a module's kernels as LLVM IR text

and the building blocks they use:

    jit.py          Engine / compile_module: llvmlite IR -> O3 object code -> ctypes functions
    measured.py     Measured: records measured once per machine (conv timings), kept in irc.cache
    vec.py          V: lane-wise IRBuilder helpers for any float type, scalar or vector
    mathlib.py      vectorised transcendentals emitted as LLVM IR (exp, log, tanh, erf, sin, pow, ...)
                    (implementations in mathlib_core.py and mathlib_special.py)
    parallel.py     threads: each kernel's k_par runs it on torch's OpenMP threads (GOMP_parallel, static chunks)
    externs.py      matmul / linear / bmm / convolution through the fastest torch library path
"""
