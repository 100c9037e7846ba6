"""Per-launch overhead of irc's CPU runtime: graphs of K independent tiny kernels (2x16 floats each, so the
work is nil), called K = 1..32; the slope of the call time over K is what one more launch costs (its
prepared ctypes call, its output allocation and the output's return), the intercept what a call costs.

    .venv/bin/python -m irc.bench.graph_overhead [--train-step] [--crossover]

Measured for the default mode and for mode="reduce-overhead" (the kernels run by one JITed launcher),
each with the kernels on the calling thread and forced onto torch's threads (a parallel launch: what
waking the team costs). `--train-step`: the MLP 1024-1024-1024-10 batch-32 train step (zero_grad,
forward, loss, backward, eager SGD step), eager against irc's forward and backward graphs, the
candidates interleaved. `--crossover`: serial against threaded launches of a few kernels by size, to
place parallel.MIN_WORK. The machine's load average is printed: on a busy machine threads wait for
cores, and a threaded launch waits for its slowest thread.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import irc
from irc.bench.models import mlp
from irc.dynamo.backend import compile_function
from irc.targets.cpu.runtime.compiled import SERIAL, Choices, Variant

KS = (1, 2, 4, 8, 16, 32)


def _samples_us(fn, reps: int) -> list[float]:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return [t / 1e3 for t in ts]


def _median_us(fn, reps: int = 3000) -> float:
    _samples_us(fn, 100)
    return statistics.median(_samples_us(fn, reps))


def _slope(xs, ys) -> tuple[float, float]:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return b, my - b * mx


def _threaded(program, on: bool) -> None:
    """Every launch of `program` on torch's threads (on) or on the calling thread."""
    program.rebuild(Choices([Variant(min_work=0 if on else SERIAL)] * len(program.compiled.launches)), cache=False)


def measure(mode: str = "default", threaded: bool = False) -> dict:
    """{"per_launch_us", "per_call_us", "launch_step_us", "calls": {K: us}} on this machine."""
    calls, steps = {}, []
    for k in KS:
        inputs = [torch.randn(2, 16) for _ in range(k)]
        program, consts = compile_function(lambda *xs: tuple(x * 2 + 1 for x in xs), *inputs, mode=mode)
        _threaded(program, threaded)
        args = [*inputs, *consts]
        calls[k] = _median_us(lambda: program(args))
        steps += [t * 1e6 for name, t in program.profile(args, reps=200) if name.startswith("launch")]
    per_launch, per_call = _slope(list(calls), list(calls.values()))
    return {
        "per_launch_us": per_launch,
        "per_call_us": per_call,
        "launch_step_us": statistics.median(steps),
        "calls": calls,
    }


def train_step(seconds: float = 8.0, threads: int | None = None) -> dict[str, tuple[float, float]]:
    """(median, 10th percentile) ms of one MLP batch-32 train step: eager, irc (default) and irc (reduce-overhead),
    interleaved. On a loaded machine the median measures the scheduler too (a step's parallel regions wait
    for descheduled threads); the 10th percentile is the step when the threads had their cores. `threads`:
    torch.set_num_threads for the measurement (one thread: the runtime's overhead without the scheduler's)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads or before)
    try:
        return _train_step(seconds)
    finally:
        torch.set_num_threads(before)


def _train_step(seconds: float) -> dict[str, tuple[float, float]]:

    def make(mode):
        model, (x,) = mlp(32)
        y = torch.randint(0, 10, (32,), generator=torch.Generator().manual_seed(0))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        fwd = model if mode is None else torch.compile(model, backend=irc.backend, options={"mode": mode})

        def step():
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(fwd(x), y).backward()
            opt.step()

        return step

    cands = {"eager": make(None), "irc": make("default"), "irc reduce-overhead": make("reduce-overhead")}
    times = {name: [] for name in cands}
    for f in cands.values():
        _samples_us(f, 20)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for name, f in cands.items():
            times[name] += [t / 1e3 for t in _samples_us(f, 5)]
    return {name: (statistics.median(t), sorted(t)[len(t) // 10]) for name, t in times.items()}


CROSSOVER = {
    "relu(2x+1)": lambda x: (x * 2 + 1).relu(),
    "sin": lambda x: x.sin(),
    "row sum": lambda x: x.sum(-1),
    "column sum": lambda x: x.sum(0),
    "softmax": lambda x: torch.softmax(x, -1),
}


def crossover(rows=(16, 32, 64, 128, 256), rounds: int = 15) -> None:
    """Serial against threaded calls of one-kernel graphs on (rows, 1024), interleaved; the 25th percentile of
    each candidate's samples (the machine's other load makes the upper ones a measure of the scheduler)."""
    for name, fn in CROSSOVER.items():
        for n in rows:
            x = torch.randn(n, 1024)
            progs = {}
            for on in (False, True):
                program, consts = compile_function(fn, x, cache=False)
                _threaded(program, on)
                progs[on] = (program, [x, *consts])
            samples = {on: [] for on in progs}
            for _ in range(rounds):
                for on, (program, args) in progs.items():
                    samples[on] += _samples_us(lambda: program(args), 40)
            p25 = {on: statistics.quantiles(s, n=4)[0] for on, s in samples.items()}
            print(
                f"  {name:11s} {n:4d}x1024 ({n * 1024:7d} elements): serial {p25[False]:8.2f} us, "
                f"{torch.get_num_threads()} threads {p25[True]:8.2f} us ({p25[False] / p25[True]:.2f}x)"
            )


def main() -> None:
    print(f"threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}")
    for mode in ("default", "reduce-overhead"):
        for threaded in (False, True):
            r = measure(mode, threaded)
            where = "torch's threads" if threaded else "the calling thread"
            print(
                f"mode {mode}, kernels on {where}: K kernels -> median call time: "
                + ", ".join(f"{k}: {v:.1f} us" for k, v in r["calls"].items())
            )
            print(
                f"  per launch (call, output allocation and return): {r['per_launch_us']:.2f} us; "
                f"fixed per call: {r['per_call_us']:.2f} us; a launch step alone: {r['launch_step_us']:.2f} us"
            )
    for threads in sorted({1, torch.get_num_threads()}) if "--train-step" in sys.argv else ():
        ms = train_step(threads=threads)
        for q, what in enumerate(("median", "10th percentile")):
            print(
                f"MLP batch-32 train step on {threads} thread(s), {what} ms: "
                + ", ".join(f"{k} {v[q]:.3f}" for k, v in ms.items())
                + "; irc / eager: "
                + ", ".join(f"{k} {v[q] / ms['eager'][q]:.2f}" for k, v in ms.items() if k != "eager")
            )
    if "--crossover" in sys.argv:
        crossover()
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
