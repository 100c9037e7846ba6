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

# flops; a smaller convolution is not timed in each layout (conv_layout.py): there the layouts differ by
# microseconds, less than the timing costs at compile time, and select-layout estimates instead
CONV_MIN_FLOPS = 2e7

# rounds and seconds of one convolution's timing in both layouts (targets/timing.py measure: interleaved medians, at least 3
# rounds, then until CONV_BUDGET_S has passed or CONV_REPS rounds have run): a stable median at a bounded compile cost
CONV_REPS = 5
CONV_BUDGET_S = 0.3
