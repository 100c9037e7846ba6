"""The code generator's tuning constants, in one place, each with its unit and how it was chosen.

The measurements behind them are in docs/cpu-target.md ("Measurements behind the code generator's choices").
The code reads them as `tuning.NAME` where it uses them, so that a test (or anyone trying another value) sets them
here. IRC_PREFETCH and IRC_STREAM_STORES (env.py) override the two that depend on the machine.
"""

from __future__ import annotations

from irc import env

from ..runtime import jit

# -- vectors ----------------------------------------------------------------------------------------------------
MIN_LANES_EXTENT = 4  # elements: a static innermost extent below this runs as scalars (lowering's VECTOR_MIN agrees)
LANES_REDUCING = 4  # native vectors a reducing nest's step spans at most: independent accumulators; measured faster

# -- tiles: the block of the space one item covers (tiles.py) ---------------------------------------------------
CHUNK = 8192  # elements of the innermost parallel dim per item by default; set with the first emitter, not re-measured
REDUCTION_COLS = 256  # columns per item of a column reduction: a 4096-wide one gives the threads 16 items, not one
REDUCTION_ITEMS = 4  # items a narrow column reduction keeps by halving its columns, down to MIN_REDUCTION_COLS
MIN_REDUCTION_COLS = 64  # columns: the narrowest column-reduction item; measured faster than 256 on narrow sums
TRANSPOSE_TILE = (16, 64)  # rows x columns of a transposed read's tile: one 16-lane block; the fastest shape measured

# -- reductions -------------------------------------------------------------------------------------------------
CASCADE = 256  # steps a lane of a float sum adds per partial sum: bounds rounding's growth; speed measured alike

# -- memory -----------------------------------------------------------------------------------------------------
CACHE_LINE = 64  # bytes: the host's cache line; one software prefetch per line
PREFETCH = env.get("IRC_PREFETCH")  # bytes a streaming load prefetches ahead (IRC_PREFETCH, default 2048; 0: none)
PREFETCH_MIN_BYTES = 32 << 20  # bytes: a static buffer up to this (the measuring machine's L3) is not prefetched
ROWS_AHEAD = 8  # rows a column reduction with math functions prefetches ahead down its items; 4, 8, 16 measured alike
ITEMS_AHEAD = 4  # items (rows) a rows kernel's first pass prefetches ahead, to arrive during its later passes; measured
# bytes: an output at least this large is stored around the caches; 3/4 of the last-level cache, as glibc's memcpy
# decides (IRC_STREAM_STORES sets it; 0: never)
STREAM_MIN_BYTES = 3 * jit.last_level_cache() // 4 if (_s := env.get("IRC_STREAM_STORES")) is None else _s or None
