"""Block sizes: a heuristic per launch, and the configurations triton.autotune tries in max-autotune mode.

Natively a block holds about 1-4K elements (registers per program); under the interpreter every
program is a Python-level step, so blocks are as large as memory allows and programs few.
"""

import time

NATIVE_BUDGET = 4096  # elements per program on a GPU
INTERPRET_BUDGET = 1 << 16


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def heuristic(mode: str, xnumel: int, rnumel: int, rblock: int | None, interpret: bool) -> dict:
    """{"XBLOCK", "RBLOCK", "num_warps"} for one launch."""
    budget = INTERPRET_BUDGET if interpret else NATIVE_BUDGET
    if mode == "pointwise":
        r = 1
    elif mode == "single":
        r = rblock
    else:
        r = min(next_pow2(rnumel), 1024 if interpret else 512)
    x = max(1, min(next_pow2(xnumel), budget // max(r, 1), 1024 if not interpret else budget))
    warps = 4 if x * r <= 2048 else 8
    return {"XBLOCK": x, "RBLOCK": r, "num_warps": warps}


def autotune_configs(mode: str, rblock: int | None) -> list[dict]:
    """The candidates max-autotune times (each {"XBLOCK", "RBLOCK", "num_warps"})."""
    if mode == "pointwise":
        return [{"XBLOCK": x, "RBLOCK": 1, "num_warps": w} for x, w in ((256, 2), (512, 4), (1024, 4), (2048, 8))]
    if mode == "single":
        xs = [x for x in (1, 2, 4, 8, 16, 32) if x * rblock <= 8192] or [
            1
        ]  # 16K-element rows spill on sm_80/sm_90 (aot.py)
        return [{"XBLOCK": x, "RBLOCK": rblock, "num_warps": 4 if x * rblock <= 2048 else 8} for x in xs]
    return [
        {"XBLOCK": x, "RBLOCK": r, "num_warps": w}
        for x, r, w in ((1, 512, 4), (1, 1024, 8), (4, 256, 4), (8, 128, 4), (16, 64, 4))
    ]


def cpu_bench(kernel_call, quantiles=None, reps: int = 3):
    """A wall-clock stand-in for triton.testing.do_bench where there is no GPU driver (the interpreter)."""
    kernel_call()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        kernel_call()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    mid = times[len(times) // 2]
    return [mid, times[0], times[-1]] if quantiles else mid


def dot_heuristic(m: int, n: int, k: int, interpret: bool) -> dict:
    """{"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps"} for the tl.dot template (tl.dot wants blocks of 16 or more).
    Tiles of at most 32x32 take 2 warps: with 4, ptxas spills the f32 template on sm_90 (aot.py)."""
    cap = 128 if interpret else 64
    fit = lambda x, c: max(16, min(c, next_pow2(x)))  # noqa: E731
    bm, bn = fit(m, cap), fit(n, cap)
    return {
        "BLOCK_M": bm,
        "BLOCK_N": bn,
        "BLOCK_K": fit(k, cap if interpret else 32),
        "num_warps": 2 if bm * bn <= 1024 else 4,
    }


DOT_CONFIGS = [(32, 32, 32, 2), (64, 64, 32, 4), (128, 64, 32, 4), (64, 128, 32, 4), (128, 128, 32, 8)]


def dot_configs(f32: bool) -> list[tuple[int, int, int, int]]:
    """max-autotune's (BLOCK_M, BLOCK_N, BLOCK_K, num_warps) for the template. f32 products (IEEE, on the FMA units)
    leave out the 128-row tiles: compiled for sm_80 and sm_90 they spill registers (aot.py); f16/bf16 ones do not."""
    return [c for c in DOT_CONFIGS if not (f32 and c[0] == 128)]
