"""Code generation: one loop.nest, specialised per launch, as `void k(start, end, argv)` in LLVM IR.

emit.py         the kernel emitter: the items, the reductions' passes over a row, the outputs; it holds:
space.py          Space: what the nest is for a launch (dims, mode, width, tile, guards); facts, no code
frame.py          Frame: the LLVM function, argv cells and runtime values, loops and lanes loops
body.py           Body: the body's ops at a point (op table, uniform values, branching selects)
access.py         Access: loads and stores: vector, broadcast, gather, masked, guarded (clamped) addresses
prefetch.py       Prefetch: software prefetches ahead of streaming loads, down rows, of the next items
stream.py         Streams: non-temporal stores of large outputs
transpose.py      Transposes: transposed reads in tiles
tiles.py        tile shapes and vector widths
tuning.py       the code generator's tuning constants (tile sizes, prefetch distances, thresholds)
branches.py     selects whose condition is uniform, to emit as branches
stash.py        values computed in one pass over a row and read in the next
reduce.py       reduction identities, combines, horizontal combine, blocked float sums
ops.py          the op table: xDSL arith/math op class -> IRBuilder code (any width)
intops.py       the table's integer arithmetic that never traps (division, remainder, shifts, powers)
types.py        compute and storage types, conversions (f16/bf16 in f32, bool as a byte)
affine.py       linear forms over runtime cells, bounds of affine maps (what proves a load in bounds)
ivals.py        index arithmetic that folds ints and broadcasts vectors
index_ir.py     index expressions as IR
vec.py          V: lane-wise IRBuilder helpers for any float type, scalar or vector
mathlib.py      vectorised transcendentals as LLVM IR (mathlib_core.py, mathlib_special.py)
listing.py      `irc-opt -t llvm`: a module's kernels as LLVM IR text
"""
