"""Code generation: one loop.nest, specialised per launch, as `void k(start, end, argv)` in LLVM IR.

    emit.py         the kernel emitter: loops, lanes, reductions, the passes over a row
    access.py       loads and stores: vector, broadcast, gather, masked, guarded (clamped) addresses
    stream.py       non-temporal stores of large outputs
    transpose.py    transposed reads in tiles
    tiles.py        tile shapes and vector widths
    branches.py     selects whose condition is uniform, as branches
    stash.py        values computed in one pass over a row and read in the next
    reduce.py       reduction identities, combines, horizontal combine, blocked float sums
    ops.py          the op table: xDSL arith/math op class -> IRBuilder code (any width)
    types.py        compute and storage types, conversions (f16/bf16 in f32, bool as a byte)
    affine.py       linear forms over runtime cells, bounds of affine maps (what proves a load in bounds)
    ivals.py        index arithmetic that folds ints and broadcasts vectors
    index_ir.py     index expressions as IR
    vec.py          V: lane-wise IRBuilder helpers for any float type, scalar or vector
    mathlib.py      vectorised transcendentals as LLVM IR (mathlib_core.py, mathlib_special.py)
    listing.py      `irc-opt -t llvm`: a module's kernels as LLVM IR text
"""
