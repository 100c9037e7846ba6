"""irc's Triton target on a GPU, next to eager and inductor in one process: `python -m irc.bench.gpu [case ...]`.

The inference cases of bench/cases.py (demo models and microbenchmarks) with their modules and inputs moved to the
GPU; torch.compile(backend="irc") picks the Triton target for GPU tensors. Each backend's first call is timed, then
rounds of triton.testing.do_bench (CUDA events, the L2 flushed between runs) interleave the backends; a figure is
the median over rounds, a ratio is eager's time over the backend's. Memory-bound cases also report GB/s against
the device's copy bandwidth measured in the same run. Results are checked against eager before any timing."""

import argparse
import statistics
import sys
import time

import torch

import irc

from .cases import MICRO, MODELS

CASES = {c.name: c for c in (*MICRO, *MODELS) if c.dynamic is None}
DEFAULT = ["transcendental-chain", "softmax-layernorm", "row-sum", "mlp-b1024", "mini-transformer", "resnet18"]


def to_gpu(x):
    if isinstance(x, (tuple, list)):
        return type(x)(to_gpu(v) for v in x)
    return x.to("cuda") if isinstance(x, (torch.Tensor, torch.nn.Module)) else x


def copy_bandwidth() -> float:
    """GB/s of a 256 MiB device-to-device copy, bytes read plus written."""
    from triton.testing import do_bench

    src = torch.empty(64 << 20, device="cuda")
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src))
    return 2 * src.numel() * 4 / ms / 1e6


def run_case(case, rounds: int) -> dict:
    from triton.testing import do_bench

    fn, inputs = to_gpu(case.make())
    compiled = {"eager": fn}
    first = {}
    with torch.no_grad():
        want = fn(*inputs)
        for name, backend in (("inductor", "inductor"), ("irc", irc.backend)):
            torch._dynamo.reset()
            c = torch.compile(fn, backend=backend)
            t = time.perf_counter()
            got = c(*inputs)
            torch.cuda.synchronize()
            first[name] = time.perf_counter() - t
            torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3)
            compiled[name] = c
        times = {name: [] for name in compiled}
        for _ in range(rounds):
            for name, c in compiled.items():
                times[name].append(do_bench(lambda c=c: c(*inputs), warmup=10, rep=50))
    ms = {name: statistics.median(v) for name, v in times.items()}
    row = {"case": case.name, "ms": ms, "first_s": first}
    if case.bandwidth:
        row["gb"] = case.bytes(inputs, want) / 1e9
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=DEFAULT, help=f"case names (default: {' '.join(DEFAULT)})")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("irc.bench.gpu: no CUDA device here", file=sys.stderr)
        return 2
    if unknown := [c for c in args.cases if c not in CASES]:
        print(f"irc.bench.gpu: unknown case(s) {', '.join(unknown)}; valid: {', '.join(CASES)}", file=sys.stderr)
        return 2
    bw = copy_bandwidth()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}; copy bandwidth {bw:.0f} GB/s")
    print("| case | eager ms | inductor | irc | irc first call s (inductor) | irc GB/s (% of copy) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in args.cases:
        try:
            r = run_case(CASES[name], args.rounds)
        except Exception as e:  # one broken case must not hide the others
            print(f"| {name} | failed: {type(e).__name__}: {str(e)[:200]} | | | | |", flush=True)
            continue
        ms = r["ms"]
        rate = f"{r['gb'] / ms['irc'] * 1e3:.0f} ({r['gb'] / ms['irc'] * 1e3 / bw:.0%})" if "gb" in r else ""
        print(
            f"| {name} | {ms['eager']:.3f} | {ms['eager'] / ms['inductor']:.2f}x | {ms['eager'] / ms['irc']:.2f}x | "
            f"{r['first_s']['irc']:.1f} ({r['first_s']['inductor']:.1f}) | {rate} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
