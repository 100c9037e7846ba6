"""Per-launch overhead of irc's CPU runtime: graphs of K independent tiny kernels (16 floats each, so the
work is nil), called K = 1..32; the slope of the call time over K is what one more launch costs (its
prepared ctypes call, its output allocation and the output's return), the intercept what a call costs.

    .venv/bin/python -m irc.bench.graph_overhead

Measured for the default mode and for mode="reduce-overhead" (the kernels run by one JITed launcher).
"""

import statistics
import time

import torch

from irc.frontend.backend import compile_function

KS = (1, 2, 4, 8, 16, 32)


def _median_us(fn, reps: int = 3000) -> float:
    for _ in range(100):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1e3


def _slope(xs, ys) -> tuple[float, float]:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return b, my - b * mx


def measure(mode: str = "default") -> dict:
    """{"per_launch_us", "per_call_us", "launch_step_us", "calls": {K: us}} on this machine."""
    calls, steps = {}, []
    for k in KS:
        inputs = [torch.randn(16) for _ in range(k)]
        program, consts = compile_function(lambda *xs: tuple(x * 2 + 1 for x in xs), *inputs, mode=mode)
        args = [*inputs, *consts]
        calls[k] = _median_us(lambda: program(args))
        steps += [t * 1e6 for name, t in program.profile(args, reps=200) if name.startswith("launch")]
    per_launch, per_call = _slope(list(calls), list(calls.values()))
    return {"per_launch_us": per_launch, "per_call_us": per_call, "launch_step_us": statistics.median(steps), "calls": calls}


def main() -> None:
    for mode in ("default", "reduce-overhead"):
        r = measure(mode)
        print(f"mode {mode}: K kernels -> median call time: " + ", ".join(f"{k}: {v:.1f} us" for k, v in r["calls"].items()))
        print(f"  per launch (call, output allocation and return): {r['per_launch_us']:.2f} us; "
              f"fixed per call: {r['per_call_us']:.2f} us; a launch step alone: {r['launch_step_us']:.2f} us")  # fmt: skip


if __name__ == "__main__":
    main()
