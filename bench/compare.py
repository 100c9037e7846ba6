"""Eager vs inductor (torch.compile's default backend) vs irc, in one run, on the demo models and the
microbenchmarks of bench/cases.py.

    .venv/bin/python -m irc.bench.compare                                 # everything (several minutes)
    .venv/bin/python -m irc.bench.compare --cases row-sum,mlp-b32 --budget 2
    .venv/bin/python -m irc.bench.compare --no-first-call                 # steady state only
    .venv/bin/python -m irc.bench.compare --dtype bf16                    # everything under bfloat16 autocast
    .venv/bin/python -m irc.bench.compare --quant int8                    # int8 PT2E models (bench/quant.py)
    .venv/bin/python -m irc.bench.compare --quant int8wo                  # weight-only int8 (torchao quantize_)

Per case and backend:
  first call, cold   a fresh process with empty compile caches (irc: IRC_CACHE_DIR; inductor:
                     TORCHINDUCTOR_CACHE_DIR) times its first call: Dynamo, AOT autograd, compile, one run
  first call, warm   a second fresh process on the caches the cold one filled
  first-call memory  in the cold process, the resident-memory peak of the first call above the level before it
                     (the model already built): what compiling and the first run add (VmHWM after writing 5 to
                     /proc/self/clear_refs, less VmRSS)
  peak memory        in the warm process, the resident-memory peak during steady calls above the level
                     before them (the same reset after two warm-up calls: a training step's saved activations)
  steady             in this process, the three backends called in turn (interleaved, so load from other
                     processes hits all alike), median per backend and its spread (IQR: first to third
                     quartile); ratios against eager and inductor
  GB/s               for memory-bound cases: ideal bytes (inputs read once, outputs written once) per
                     second, and that as a share of the machine's copy bandwidth (a 64 MB copy_ into a
                     preallocated tensor, measured at the start and after each such case: the best
                     median counts, as STREAM reports its best)
  roofline           for the cases among bench/roofline.py's models: irc's time split into library calls,
                     generated kernels and overhead against the machine's limits (--no-roofline: none)
The training cases (bench/cases.py TRAIN) time whole steps instead: zero_grad, the forward compiled by
the backend, the loss, backward and an eager SGD step (train-<model>), or torch.compile(opt.step) for
AdamW (adamw-step); their first call compiles every graph of the step. A case whose package is missing
(HF BERT/GPT-2 without transformers) is listed as skipped, with the reason. Everything else runs under
torch.no_grad() (inference). Goals are reported, never asserted. Results go to
bench/results/compare-<time>.json and .md, and bench/results/latest.md; figures (speedup, first call, peak
memory) as PNGs beside them, linked from the .md (bench/plots.py).

--dtype bf16 or f16 (default f32: no autocast) runs every case under torch.autocast("cpu", dtype), the same
for eager, inductor and irc, here and in the first-call processes: an inference call under no_grad and
autocast (one context around all the steady calls, so eager keeps its cast weights across calls, autocast's
cache: the stronger eager baseline); a training step's forward and loss under autocast, its backward and SGD
step outside it (as autocast training is written). Autocast lowers the products (mm, linear, convolution,
attention) and leaves the rest in float32, so a case without one (the memory-bound microbenchmarks, bucketize,
AdamW's step) runs as it is: the column "bf16 ops" (or f16) counts the aten calls of one eager call that
returned the dtype, of all. Errors in such a run are against the case's float64 reference (its model and float
inputs in float64, no autocast; a training step: its first loss), for every backend, eager included, and as a
ratio to eager's own error ("err / eager err"; issue 52's bar: 1.5x at most). The JSON's meta records the
dtype; the files are compare-bf16-<time>.json and .md, bench/results/latest-bf16.md and
latest-bf16-<figure>.png (latest.md stays the last float32 run), and the roofline's library rates are measured
in that dtype (bench/roofline.py).
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from .bounds import copy_bandwidth
from .cases import CASES, DTYPES, MICRO, MODELS, TRAIN, TRAINING, autocast, float64
from .report import goals, markdown

RESULTS = Path(__file__).resolve().parent / "results"


def build(case, backend: str, amp: torch.dtype | None = None):
    """(callable, inputs) for one backend: a fresh copy of the model, compiled with that backend (a training
    case: its step, whose forward or optimizer step is compiled with it; `amp`: the step's autocast dtype)."""
    if backend == "eager":
        compile_fn = lambda fn: fn  # noqa: E731
    elif backend == "inductor":
        compile_fn = lambda fn: torch.compile(fn, dynamic=case.dynamic)  # noqa: E731
    else:
        import irc

        compile_fn = lambda fn: torch.compile(
            fn,
            backend=irc.backend,
            dynamic=case.dynamic,  # noqa: E731
            **case.compile_kwargs(backend),
        )
    if case.kind in TRAINING:
        return case.make(compile_fn, amp), ()
    fn, inputs = case.make()
    return compile_fn(copy.deepcopy(fn) if isinstance(fn, torch.nn.Module) else fn), inputs


def grad_mode(case):
    """Training cases run with autograd on; everything else under torch.no_grad()."""
    return torch.enable_grad() if case.kind in TRAINING else torch.no_grad()


def call_autocast(case, amp: torch.dtype | None):
    """The autocast around a call: an inference case's whole call; none around a training step, whose forward
    and loss run under it inside the step (bench/cases.py _train)."""
    return autocast(None if case.kind in TRAINING else amp)


def reference(case):
    """The case's output in float64 without autocast (a training step: its first loss), which a low-precision
    run measures every backend's error against; None where there is none (AdamW's step)."""
    if case.kind == "optimizer":
        return None
    with grad_mode(case), torch.autocast("cpu", enabled=False):  # steady calls it with the run's autocast on
        if case.kind == "train":
            return case.make(lambda fn: fn, reference=True)()
        fn, inputs = case.make()
        fn = copy.deepcopy(fn).double() if isinstance(fn, torch.nn.Module) else fn
        return fn(*(float64(x) for x in inputs))


def lowp_ops(fn, inputs, amp: torch.dtype) -> list[int]:
    """[aten calls that returned a tensor of dtype `amp`, all aten calls] of one call: whether autocast lowered
    anything in the case."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    count = [0, 0]

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            count[0] += any(isinstance(t, torch.Tensor) and t.dtype == amp for t in tree_flatten(out)[0])
            count[1] += 1
            return out

    with Count():
        fn(*inputs)
    return count


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def child(case_name: str, backend: str, amp: torch.dtype | None = None) -> None:
    """Time the first call in this fresh process, then the memory peak of steady calls; print JSON."""
    import gc

    case = CASES[case_name]
    t0 = time.perf_counter()
    with grad_mode(case), call_autocast(case, amp):
        fn, inputs = build(case, backend, amp)
        gc.collect()
        start = _reset_peak()
        t1 = time.perf_counter()
        fn(*inputs)
        first = time.perf_counter() - t1
        first_peak = _status("VmHWM") - start
        for _ in range(2):
            fn(*inputs)
        gc.collect()
        before = _reset_peak()
        for _ in range(3):
            fn(*inputs)
        peak = _status("VmHWM") - before
    print(
        json.dumps(
            {"first_call_s": first, "build_s": t1 - t0, "first_peak_mb": first_peak / 2**20, "peak_mb": peak / 2**20}
        )
    )


def _reset_peak() -> int:
    """Start a new peak (VmHWM := VmRSS, where the kernel allows it); the resident bytes now."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return _status("VmRSS")


def first_calls(case, backend: str, root: Path, timeout: float, dtype: str = "f32") -> dict:
    """Cold then warm first call of `case` on `backend`, each in a fresh process sharing one cache dir."""
    cache = root / f"{case.name}-{backend}"
    cache.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, IRC_CACHE_DIR=str(cache / "irc"), TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"))
    out = {}
    for kind in ("cold", "warm") if backend != "eager" else ("cold",):
        cmd = [sys.executable, "-m", "irc.bench.compare", "--child", case.name, backend, "--dtype", dtype]
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
            out[kind] = (
                json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-400:]}
            )
        except (subprocess.TimeoutExpired, IndexError, ValueError) as e:
            out[kind] = {"error": f"{type(e).__name__}: {e}"[:400]}
    if backend == "eager":
        out["warm"] = out["cold"]
    return out


def mm_gflops(n: int = 1024, reps: int = 5, dtype: torch.dtype = torch.float32) -> float:
    """The machine's matmul rate right now: a 1024^3 torch.mm in `dtype`, median of `reps`."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - t0)
    return 2 * n**3 / statistics.median(times) / 1e9


def steady(case, budget: float, max_rounds: int = 200, amp: torch.dtype | None = None) -> dict:
    """Interleaved calls of every backend of the case; medians, and the max error of each against eager (under
    autocast(amp): also each one's error against the float64 reference, and that over eager's)."""
    backends = case.backends
    runs = {b: build(case, b, amp) for b in backends}
    out = {b: {} for b in backends}
    with grad_mode(case), call_autocast(case, amp):
        want, firsts = None, {}
        for b, (fn, inputs) in runs.items():
            got = firsts[b] = fn(*inputs)  # compiles (warm caches) and warms up
            fn(*inputs)
            if b == "eager":
                want = got
                out[b]["bytes"] = case.bytes(inputs, got)
                if amp is not None:
                    out[b]["lowp_ops"] = lowp_ops(fn, inputs, amp)
            else:
                out[b]["max_error"] = _max_error(got, want)
        if amp is not None and out["eager"]["lowp_ops"][0] and (ref := reference(case)) is not None:
            for b, got in firsts.items():
                out[b]["ref_error"] = _max_error(got, ref)
                if b != "eager" and (e := out["eager"]["ref_error"]) > 0:
                    out[b]["err_ratio"] = out[b]["ref_error"] / e
        times = {b: [] for b in backends}
        deadline = time.perf_counter() + budget
        for r in range(max_rounds):
            k = r % len(backends)
            order = backends[k:] + backends[:k]
            for b in order:
                fn, inputs = runs[b]
                t0 = time.perf_counter()
                fn(*inputs)
                times[b].append(time.perf_counter() - t0)
            if r >= 4 and time.perf_counter() > deadline:
                break
    if case.bandwidth:  # the machine's copy bandwidth right now, for this case's share (the best seen counts)
        out["eager"]["copy_gbps"] = copy_bandwidth(7)
    for b in backends:
        out[b]["steady_s"] = statistics.median(times[b])
        q = statistics.quantiles(times[b], n=4, method="inclusive")
        out[b]["iqr_s"] = [q[0], q[2]]  # the spread of the steady figure: first and third quartiles
        out[b]["rounds"] = len(times[b])
    return out


def _max_error(got, want) -> float:
    from torch.utils._pytree import tree_flatten

    errs = [0.0]
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        if isinstance(g, torch.Tensor) and g.numel():
            errs.append((g.double() - w.double()).abs().max().item())
    return max(errs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases",
        default=",".join(c.name for c in MODELS + MICRO + TRAIN),
        help="comma-separated case names, or the groups models, micro, train",
    )
    ap.add_argument("--budget", type=float, default=4.0, help="seconds of interleaved steady calls per case")
    ap.add_argument("--no-first-call", action="store_true")
    ap.add_argument("--no-roofline", action="store_true", help="leave out the roofline section (bench/roofline.py)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds for one first-call process")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads for every backend (default: torch's)")
    ap.add_argument(
        "--dtype",
        choices=list(DTYPES),
        default="f32",
        help="run every case under torch.autocast('cpu', dtype) for all backends (default f32: no autocast)",
    )
    ap.add_argument(
        "--quant",
        choices=["int8", "int8wo"],
        help="int8 models instead (bench/quant.py: int8 PT2E, --cases convnet-b32,resnet18-b8; int8wo weight-only)",
    )
    ap.add_argument("--child", nargs=2, metavar=("CASE", "BACKEND"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    amp = DTYPES[args.dtype]
    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # for the first-call processes
    if args.child:
        child(*args.child, amp)
        return 0
    if args.quant:
        from . import quant

        return quant.main([n for n in args.cases.split(",") if n in quant.MODELS], args.budget, args.quant)
    groups = {"models": MODELS, "micro": MICRO, "train": TRAIN}
    names = [m for n in args.cases.split(",") if n for m in ([c.name for c in groups[n]] if n in groups else [n])]
    if unknown := [n for n in names if n not in CASES]:
        ap.error(f"unknown case(s) {unknown}; valid: {', '.join(CASES)}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "dtype": args.dtype,
    }
    meta["copy_gbps"], meta["mm_gflops"] = copy_bandwidth(), mm_gflops()
    if amp is not None:  # the products' rate in the run's dtype, beside float32's
        meta["mm_gflops_dtype"] = mm_gflops(dtype=amp)
    from .plots import machine, markdown_links, write_figures

    meta["machine"] = machine()
    from .graph_overhead import measure

    meta["overhead"] = {k: v for k, v in measure().items() if k != "calls"}
    lowp = f" ({args.dtype} {meta['mm_gflops_dtype']:.0f})" if amp is not None else ""
    print(
        f"copy bandwidth {meta['copy_gbps']:.1f} GB/s; 1024^3 mm {meta['mm_gflops']:.0f} GFLOP/s{lowp}; "
        f"{meta['threads']} threads; load {meta['load_before'][0]:.1f}; dtype {args.dtype}",
        flush=True,
    )
    results = {}
    with tempfile.TemporaryDirectory(prefix="irc-bench-") as tmp:
        for name in names:
            case = CASES[name]
            row = {b: {} for b in case.backends}
            if why := case.skip():
                results[name] = {**row, "skipped": why}
                print(f"{name}: skipped ({why})", flush=True)
                continue
            if not args.no_first_call:
                for b in case.backends:
                    row[b]["first_call"] = first_calls(case, b, Path(tmp), args.timeout, args.dtype)
                os.environ["IRC_CACHE_DIR"] = str(Path(tmp) / f"{name}-irc" / "irc")
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tmp) / f"{name}-inductor" / "inductor")
            try:
                for b, v in steady(case, args.budget, amp=amp).items():
                    row[b].update(v)
            except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
                row["error"] = f"{type(e).__name__}: {e}"[:400]
            results[name] = row
            meta["copy_gbps"] = max(meta["copy_gbps"], row["eager"].get("copy_gbps", 0.0))
            print(markdown({name: row}, meta, header=False), flush=True)
        roofline_md, roofline = "", []
        if not args.no_roofline:  # issue 17: where irc's time goes against the machine's limits (warm caches)
            from .roofline import section

            def warm(case_name):  # the caches its first-call processes filled
                if not args.no_first_call:
                    os.environ["IRC_CACHE_DIR"] = str(Path(tmp) / f"{case_name}-irc" / "irc")

            roofline_md, roofline = section(names, meta["copy_gbps"], before=warm, dtype=amp)
    meta["load_after"] = os.getloadavg()
    # a low-precision run's files carry its dtype, so it overwrites no float32 run's latest.md or figures
    tag = "" if amp is None else f"-{args.dtype}"
    stem = f"compare{tag}-{time.strftime('%Y%m%d-%H%M%S')}"
    doc = {"meta": meta, "cases": results, "goals": goals(results, meta), "roofline": roofline}
    (RESULTS / f"{stem}.json").write_text(json.dumps(doc, indent=1, default=str))
    md = markdown(results, meta) + roofline_md
    try:
        md += markdown_links(write_figures(doc, RESULTS, stem, latest=f"latest{tag}"))
    except Exception as e:  # noqa: BLE001 - figures must not lose the results
        print(f"figures not drawn: {type(e).__name__}: {e}", file=sys.stderr)
    (RESULTS / f"{stem}.md").write_text(md)
    (RESULTS / f"latest{tag}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
