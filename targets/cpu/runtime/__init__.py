"""Running a compiled graph on the CPU.

graph.py        the planner: @main as roots, cells (runtime integers) and steps
compiled.py     Compiled: what is built once (launches specialised in their variants, the JITed module)
executor.py     Executor: runs calls of a Compiled (pooled contexts, argument binding and checks, results)
steps.py        what one call runs: the frame of cells, roots, alloc/derive/extern/launch steps
call_source.py  a call written out as one generated Python function (what the executor runs by default)
launcher.py     mode="reduce-overhead": runs of steps as JITed launchers (kernels, sgemm_, torch's threads)
autotune.py     mode="max-autotune": per launch, vector width, tile and serial/parallel measured (Choices)
parallel.py     threads: each kernel's k_par runs on torch's OpenMP threads (GOMP_parallel, static chunks)
alloc.py        buffers: huge pages, recycled when their storage dies
jit.py          llvmlite IR -> O3 object code -> ctypes functions; the host's CPU facts (or IRC_CPU's)
compile_worker.py  the process jit.py compiles in, so that a module past its deadline can be stopped (llvmlite only)
isa.py          the features of a CPU named by IRC_CPU, read from the code LLVM generates for it
tuning.py       the runtime's thresholds and sizes (huge pages, scratch, parallel work), each with its unit
"""
