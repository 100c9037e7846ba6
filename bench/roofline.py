"""Roofline: where every millisecond of an irc call goes, against what the machine allows (issue 17).

    .venv/bin/python -m irc.bench.roofline                          # the default models (a few minutes)
    .venv/bin/python -m irc.bench.roofline --models mlp-b32,convnet-eval --rounds 10
    .venv/bin/python -m irc.bench.roofline --dtype bf16                # under bfloat16 autocast, bf16 rates
    .venv/bin/python -m irc.bench.roofline --quant int8                # PT2E int8 models, oneDNN's int8 rates

Per model (a bench/cases.py case, compiled with torch.compile(backend=irc.backend) under torch.no_grad()):
  machine limits   measured in this process: the copy bandwidth (a copy_ into a preallocated tensor, the
                   best of a few medians: 64 MB for main memory, 1, 4 and 16 MB for what the caches hold)
                   and, for every matrix product, convolution or attention the model runs, the best library
                   time for that exact problem alone (torch.mm, MKL and oneDNN linear paths, prepacked
                   weights, NCHW and channels-last convolution: the fastest median); the vector
                   instructions a thread issues per second (independent FMAs and adds, bench/arithmetic.py)
  roofline         sum over the library calls of that best time (flops / best rate) plus, for every other
                   step (generated kernels, copies), the bytes it must move / the copy bandwidth of a copy
                   moving as many bytes (bench/bounds.py: Bandwidth), or, for a kernel whose body is mostly
                   arithmetic (exp, tanh), the vector instructions it must issue / the vector rate of the
                   threads (bench/arithmetic.py), whichever is longer
  measured         the compiled model's call (median, IQR), interleaved with Executor.profile of the cpu
                   Executors it runs: library calls, generated kernels (each with its % of its own bound),
                   and the runtime overhead (the call minus its steps: binding, allocations, Dynamo's
                   guards, AOT's wrapper, graphs that run eagerly)
  efficiency       roofline / measured
A kernel can still beat its bound (over 100%) where its data were left in a cache the copy of its size does
not fit: the bound assumes they come from the level that holds its whole working set.
--dtype bf16 or f16 (bench/compare.py --dtype passes its own): the model is compiled and called under
torch.autocast("cpu", dtype), and every product's best library time is measured in that dtype for its exact
shape (torch.mm/addmm/bmm, the linear and convolution paths, sdpa, all on operands of that dtype), so a bf16
model's efficiency is against bf16 rates; a product irc runs in float32 there is still bounded by the dtype's
rate (autocast asked for it) and marked "irc: float32" in the detail table. HF BERT and GPT-2 are among the
default models where transformers is installed.
--quant int8: bench/quant.py's PT2E models (static: the ConvNet and ResNet-18; dynamic: the transformers), quantized
as compare --quant int8 does and compiled with irc; X86InductorQuantizer makes every convolution and linear layer
an int8 product, so each mm, addmm and convolution is bounded by oneDNN's int8 kernel for its shape (qconv /
qlinear, prepacked, uint8 activations and per-channel int8 weights: the machine's int8 rate, VNNI or AMX where
present), marked "irc: float32" where irc runs it as the graph's float chain (Rules.int8_products).
Figures are only as good as the machine is quiet (the load average is printed). JSON goes to
bench/results/roofline-<time>.json (roofline-bf16-<time>.json under --dtype bf16; its "dtype" says which).
bench/compare.py's report carries the summary table (`section`). This module measures; the records of a call
(Part, Roofline) and how they read (`summary`, `detail`, `header`, `as_json`) are bench/breakdown.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import contextmanager

import torch

from .arithmetic import kernel_ops, vector_rate
from .bounds import (
    INT8_FORMS,
    Bandwidth,
    best_time,
    describe,
    extern_bytes,
    flops,
    kernel_bytes,
    kernel_summary,
    problem,
    shape,
)
from .breakdown import Part, Roofline, as_json, detail, header, summary
from .cases import DTYPES, autocast

DEFAULT = (
    "mlp-b32",
    "mlp-b1024",
    "convnet-eval",
    "mini-transformer",
    "softmax-layernorm",
    "bandwidth-chain",
    "transcendental-chain",
    "resnet18",
    "hf-bert",  # with transformers installed (bench/cases.py has no HF model case without it)
    "hf-gpt2",
)
_FLAGS = {dtype: flag for flag, dtype in DTYPES.items()}  # torch.bfloat16 -> "bf16"


# -- measuring a model --------------------------------------------------------------------------------
@contextmanager
def capture():
    """Record the cpu target's Executors compiled (and the argument lists they are then called with) while active."""
    from irc.targets.cpu.runtime.executor import Executor
    from irc.targets.cpu.target import CpuTarget

    found: dict[int, list] = {}  # id(program) -> [program, args or None]
    compile_, call = CpuTarget.compile, Executor.__call__

    def compile_hook(self, module, args, opts, **kw):
        built = compile_(self, module, args, opts, **kw)
        found[id(built.run)] = [built.run, None]
        return built

    def call_hook(self, args):
        if id(self) in found:
            found[id(self)][1] = list(args)
        return call(self, args)

    CpuTarget.compile, Executor.__call__ = compile_hook, call_hook
    try:
        yield found
    finally:
        CpuTarget.compile, Executor.__call__ = compile_, call


def _match(g, names: list[str]) -> list:
    """The graph step of each profiled step name (Executor.profile leaves out launches of no items)."""
    out, j = [], 0
    for name in names:
        kind, _, rest = name.partition(" ")
        while not (
            g.steps[j].kind == kind
            and (kind != "launch" or rest.split()[0] == g.steps[j].op.callee.root_reference.data)
        ):
            j += 1
        out.append(g.steps[j])
        j += 1
    return out


def _values(program, args) -> list:
    """The cells of one call (dynamic sizes); the static graphs of the demo models need none."""
    if program.compiled.static:
        return []
    cx = program.context()
    program.bind(cx, args)
    for step in cx.steps:
        step()
    return cx.vals


def classify(
    program,
    args,
    named_times: list[tuple[str, float]],
    bandwidth: Bandwidth,
    rates: dict,
    prefix: str = "",
    amp: torch.dtype | None = None,
    int8: bool = False,
) -> list[Part]:
    """Parts of one Executor's call from Executor.profile's (name, seconds): each with its flops or bytes and
    bound; `rates` caches best_time per problem (key: describe(problem)) and is filled as needed. `amp`: the
    run's autocast dtype, the one a float32 product's best time is measured in. `int8`: a quantized model's, whose
    every mm, addmm and convolution is bounded by oneDNN's int8 kernel for its shape, whatever irc runs."""
    g, vals = program.compiled.g, _values(program, args)
    parts = []
    for (name, secs), st in zip(named_times, _match(g, [n for n, _ in named_times])):
        if st.kind == "launch":
            nbytes, ops = kernel_bytes(g, st, vals), kernel_ops(g, st, vals)
            what = f"{prefix}{name.removesuffix(')').replace(' (JITed ', ' (')}: {kernel_summary(g, st, vals)})"
            memory, arith = bandwidth.seconds(nbytes), ops / (vector_rate() * torch.get_num_threads())
            parts.append(
                Part(
                    "kernel",
                    what,
                    secs,
                    max(memory, arith),
                    bytes=nbytes,
                    ops=ops,
                    limit="arithmetic" if arith > memory else "memory",
                )
            )
        elif st.kind == "extern":
            nbytes, p = extern_bytes(g, st, vals), problem(g, st, vals)
            if p is None:  # a copy, a bounds check, a region on the reference: bound by its traffic
                what = "x".join(map(str, shape(st.ins[0], vals))) if st.ins and hasattr(st.ins[0], "sizes") else ""
                parts.append(
                    Part("library", f"{prefix}{name} {what}".rstrip(), secs, bandwidth.seconds(nbytes), bytes=nbytes)
                )
                continue
            as_is = ""
            if int8 and p["op"] in INT8_FORMS and p["dtype"] == "float32":  # the quantizer made it an int8 product
                p, as_is = dict(p, dtype="int8"), " (irc: float32)"
            elif amp is not None and p["dtype"] == "float32":  # autocast asked for it in amp: bound at amp's rate
                p, as_is = dict(p, dtype=str(amp).removeprefix("torch.")), " (irc: float32)"
            key = describe(p)
            if key not in rates:
                rates[key] = best_time(p)
            best, how = rates[key]
            parts.append(
                Part(
                    "library",
                    f"{prefix}extern {key}{as_is}",
                    secs,
                    best if best else bandwidth.seconds(nbytes),
                    flops(p),
                    nbytes,
                    problem=key,  # keywords: Part's ops and limit come before them
                    best=how,
                )
            )
        else:
            parts.append(Part("runtime", prefix + name, secs))
    return parts


def _profile(program, args, reps: int):
    return program.profile(args, reps=reps)


def measure(
    name: str,
    call,
    found: dict,
    bandwidth: Bandwidth,
    rounds: int = 10,
    reps: int = 3,
    *,
    clock=time.perf_counter,
    profile=_profile,
    rates: dict | None = None,
    amp: torch.dtype | None = None,
    int8: bool = False,
) -> Roofline:
    """Time `call()` (the compiled model) `reps` times, then Executor.profile each cpu Executor `reps` times,
    in `rounds` alternating rounds (load from other processes hits both alike); medians over all samples. Both
    under autocast(amp); the library rates outside it, in the products' (or amp's) dtype."""
    programs = [(p, args) for p, args in found.values() if args is not None]
    calls, steps = [], [[] for _ in programs]
    with torch.no_grad(), autocast(amp):
        for _ in range(rounds):
            for _ in range(reps):
                t0 = clock()
                call()
                calls.append(clock() - t0)
            for i, (p, args) in enumerate(programs):
                steps[i].append(profile(p, args, reps))
    q = statistics.quantiles(calls, n=4, method="inclusive")
    out = Roofline(name, statistics.median(calls), (q[0], q[2]), programs=len(programs))
    rates = {} if rates is None else rates
    for i, ((p, args), runs) in enumerate(zip(programs, steps)):
        named = [(n, statistics.median(r[k][1] for r in runs)) for k, (n, _) in enumerate(runs[0])]
        out.parts += classify(p, args, named, bandwidth, rates, f"graph{i} " if len(programs) > 1 else "", amp, int8)
    if missing := len(found) - len(programs):
        out.notes.append(f"{missing} compiled program(s) never called")
    return out


def run_case(
    case_name: str, bandwidth: Bandwidth, rounds: int, rates: dict, amp: torch.dtype | None = None
) -> Roofline:
    """Compile the case with irc (under autocast(amp)), capture its Executors, measure."""
    import irc
    from irc import report

    from .cases import CASES

    case = CASES[case_name]
    fn, inputs = case.make()
    torch._dynamo.reset()  # a model of a class compiled before would reuse that compile: no Executor captured
    mark = report.mark()
    with capture() as found, torch.no_grad(), autocast(amp):
        compiled = torch.compile(fn, backend=irc.backend, dynamic=case.dynamic)
        compiled(*inputs)
        compiled(*inputs)  # the second call records every program's arguments
    return _measured(case_name, compiled, inputs, found, mark, bandwidth, rounds, rates, amp)


def run_int8_case(name: str, bandwidth: Bandwidth, rounds: int, rates: dict) -> Roofline:
    """A bench/quant.py model quantized by PT2E (static or dynamic), compiled with irc; its products bounded by
    oneDNN's int8 kernels."""
    import irc
    from irc import report

    from . import quant

    make, scheme = quant.MODELS[name]
    model, inputs = make()
    q = quant.quantize(model.eval(), inputs, scheme == "dynamic")
    torch._dynamo.reset()
    mark = report.mark()
    with capture() as found, torch.no_grad():
        compiled = torch.compile(q, backend=irc.backend)
        compiled(*inputs)
        compiled(*inputs)
    return _measured(name, compiled, inputs, found, mark, bandwidth, rounds, rates, None, int8=True)


def _measured(name, compiled, inputs, found, mark, bandwidth, rounds, rates, amp, int8=False) -> Roofline:
    from irc import report

    r = measure(name, lambda: compiled(*inputs), found, bandwidth, rounds, rates=rates, amp=amp, int8=int8)
    if elsewhere := [g for g in report.reports_since(mark).graphs if g.eager_graph or g.target != "cpu"]:
        r.notes.append(f"{len(elsewhere)} graph(s) not on irc's cpu target (eager or reference): counted as overhead")
    torch._dynamo.reset()
    return r


# -- the models, compare's section, the command -------------------------------------------------------


def run(
    names,
    rounds: int = 8,
    bandwidth: Bandwidth | None = None,
    log=print,
    amp: torch.dtype | None = None,
    int8: bool = False,
) -> list[Roofline]:
    """`int8`: `names` are bench/quant.py's PT2E models (run_int8_case), else bench/cases.py's."""
    bandwidth = bandwidth or Bandwidth.measure()
    rates: dict = {}
    results = []
    for name in names:
        try:
            if int8:
                results.append(run_int8_case(name, bandwidth, rounds, rates))
            else:
                results.append(run_case(name, bandwidth, rounds, rates, amp))
            log(detail(results[-1]))
        except Exception as e:  # noqa: BLE001 - one failing model must not lose the others
            results.append(Roofline(name, 0.0, (0.0, 0.0), notes=[f"failed: {type(e).__name__}: {e}"[:300]]))
            log(f"## {name}\n\n{results[-1].notes[0]}\n")
    return results


def section(
    names, memory_gbps: float, rounds: int = 5, before=lambda name: None, dtype: torch.dtype | None = None
) -> tuple[str, list[dict]]:
    """bench/compare.py's roofline section: (markdown, JSON rows) for the cases of `names` among DEFAULT;
    `before(name)` runs before each compile (compare points the caches at the case's warm ones); `memory_gbps`:
    the copy bandwidth compare measured (the best of it and this one's counts); `dtype`: compare's autocast
    dtype (None: float32), which the models run under and the library rates are measured in."""
    chosen = [n for n in names if n in DEFAULT]
    if not chosen:
        return "", []
    results, bandwidth = [], Bandwidth.measure(memory_gbps)
    for name in chosen:
        before(name)
        results += run([name], rounds, bandwidth, log=lambda s: None, amp=dtype)
    flag = f" --dtype {_FLAGS[dtype]}" if dtype is not None else ""
    text = (
        f"\n## Roofline\n\n`python -m irc.bench.roofline{flag}` ({rounds} rounds per model): {header(bandwidth, dtype)}"
        "Roofline = best library time of each product alone + bytes of every other step / copy bandwidth at its size "
        "(or its vector instructions / the vector rate, where that is longer); "
        "efficiency = roofline / measured; overhead = the call minus its library calls and kernels.\n\n"
    )
    return text + summary(results), [as_json(r) for r in results]


def main(argv=None) -> int:
    from .cases import CASES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ",".join(n for n in DEFAULT if n in CASES)
    ap.add_argument(
        "--models", help=f"bench/cases.py names (default {default}; with --quant int8, bench/quant.py's PT2E models)"
    )
    ap.add_argument("--rounds", "--reps", type=int, default=8, help="alternating rounds of call and profile")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's)")
    ap.add_argument(
        "--dtype",
        choices=list(DTYPES),
        default="f32",
        help="run the models under torch.autocast('cpu', dtype), library rates in it (default f32: no autocast)",
    )
    ap.add_argument(
        "--quant",
        choices=["int8"],
        help="bench/quant.py's PT2E models instead (default: all of its static and dynamic ones), quantized, their "
        "products bounded by oneDNN's int8 kernels",
    )
    args = ap.parse_args(argv)
    amp = DTYPES[args.dtype]
    int8 = args.quant == "int8"
    known = CASES
    if int8:
        from . import quant

        if why := quant.missing():
            ap.error(why)
        known = {n: s for n, s in quant.MODELS.items() if s[1] in ("static", "dynamic")}
    names = [n for n in (args.models or (",".join(known) if int8 else default)).split(",") if n]
    if unknown := [n for n in names if n not in known]:
        ap.error(f"unknown model(s) {unknown}; valid: {', '.join(known)}")
    if int8 and amp is not None:
        ap.error("--quant int8 runs the quantized models as PT2E made them: no --dtype")
    if args.threads:
        torch.set_num_threads(args.threads)
    bandwidth = Bandwidth.measure()
    print(header(bandwidth, amp, int8), flush=True)
    results = run(names, args.rounds, bandwidth, log=lambda s: print(s, flush=True), amp=amp, int8=int8)
    print(summary(results))
    from .compare import RESULTS

    RESULTS.mkdir(parents=True, exist_ok=True)
    tag = "-int8" if int8 else "" if amp is None else f"-{args.dtype}"
    path = RESULTS / f"roofline{tag}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    doc = {
        "dtype": "int8" if int8 else args.dtype,
        "bandwidth_gbps": bandwidth.memory,
        "cached_gbps": bandwidth.cached,
        "threads": torch.get_num_threads(),
        "load": os.getloadavg(),
        "models": [as_json(r) for r in results],
    }
    path.write_text(json.dumps(doc, indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
