"""The CPU runtime's tuning constants, each with its unit and how it was chosen; the code reads them from here.

The measurements behind them are in docs/cpu-target.md, "Measurements behind the runtime's and libraries' choices".
The mode-specific search constants of max-autotune stay in autotune.py, beside the search that reads them.
"""

from __future__ import annotations

from irc import env

# bytes; a buffer this large or larger is a pooled huge-page mapping (alloc.py): two 2 MiB pages, about where a fresh
# allocation's page faults start to cost as much as a kernel's pass over it (a round size, not swept)
HUGE_MIN = 4 << 20

# bytes; the most a context keeps for one intermediate between calls (call_source.py): larger ones are alloc.py's
# pooled huge pages anyway, so the scratch stops where they start
SCRATCH_MAX = HUGE_MIN

# bytes; free pooled buffers kept at most (IRC_POOL_BYTES, default 1 GiB): a cap on memory held for reuse, not timed
POOL_BYTES = env.get("IRC_POOL_BYTES")

# elements of work; a launch with less runs serially on the calling thread (IRC_PARALLEL_MIN_WORK, default 65536):
# where waking torch's OpenMP team stops paying for itself on cheap kernels (bench/graph_overhead.py --crossover)
PARALLEL_MIN_WORK = env.get("IRC_PARALLEL_MIN_WORK")

# bytes; the last-level cache assumed where Linux lists none (jit.last_level_cache): a common server L3, a guess
LAST_LEVEL_CACHE_FALLBACK = 32 << 20
