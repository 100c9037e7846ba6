"""The CPU target's library tuning constants, each with its unit and how it was chosen; the code reads them from here.

The measurements behind them are in docs/cpu-target.md, "Measurements behind the runtime's and libraries' choices".
"""

from __future__ import annotations

# flops (2 m k n); a smaller product stays on torch.mm (MKL's own path), whatever its operands: below it a library
# call's thread wake-ups cost more than its arithmetic (set by timing small products, not swept finely)
SMALL_FLOPS = 16e6

# rows; a row-major x @ W^T with at most this many rows runs as W @ x^T (mm_rules.computes_transposed): where MKL's
# sgemm stops running the transpose clearly faster (the M x K x N grid in docs/cpu-target.md)
TRANSPOSED_MAX_ROWS = 256

# elements; both of K and N must be at least this for the product to turn: the smallest side of the measured grid
TRANSPOSED_MIN_SIDE = 256

# rows; a bf16 x @ W^T with this many rows runs as W @ x^T where torch's bf16 product is oneDNN's AMX kernel
# (mm_rules.computes_transposed): 1.25-2x faster from 2 to 128 rows on every shape measured, mixed from 192, even
# at 1 (docs/cpu-target.md)
TRANSPOSED_BF16_ROWS = (2, 128)

# rows; a product the graph returns turns only up to this many: its transposed result is then copied row-major, one
# pass over it, which ate the gain from 64 rows on (16x256 @ 256x50257 bf16 1.35 -> 0.87 ms, 64 rows 1.83 -> 2.08)
TRANSPOSED_RETURNED_ROWS = 32

# flops; a smaller convolution is not timed in each layout (conv_layout.py): there the layouts differ by
# microseconds, less than the timing costs at compile time, and select-layout estimates instead
CONV_MIN_FLOPS = 2e7

# rounds and seconds of one convolution's timing in both layouts (targets/timing.py measure: interleaved medians, at least 3
# rounds, then until CONV_BUDGET_S has passed or CONV_REPS rounds have run): a stable median at a bounded compile cost
CONV_REPS = 5
CONV_BUDGET_S = 0.3
