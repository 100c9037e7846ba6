"""Compile time against graph size: the same block repeated N = 1, 2, 4, ... times, each graph compiled cold,
seconds per FX node reported per stage and per pass. A compiler whose passes are linear in the number of ops
shows flat columns; a column that grows with N is a superlinear pass (issue 16).

    .venv/bin/python -m irc.bench.compile_scaling                     # N = 1, 2, 4, 8, 16, every case
    .venv/bin/python -m irc.bench.compile_scaling --max-n 4 --cases transformer-fwd
    .venv/bin/python -m irc.bench.compile_scaling --dump-mem DIR      # each graph's mem stage, to compare compilers
    .venv/bin/python -m irc.bench.compile_scaling --profile           # cProfile of the largest N's lowering

Cases (bench/models.py's blocks, small tensors: compile time depends on the ops, not the sizes):
    transformer-fwd    N MiniTransformer encoder blocks, inference
    transformer-train  the same stack's train step: AOT autograd's forward and backward graphs
    conv-fwd           N ResNet basic blocks (conv-BN-ReLU-conv-BN + residual, ReLU), inference
    conv-train         the same blocks' train step (batch norms in training mode)

The graphs come from AOT autograd (aot_function with a compiler that only captures them, the backend's
decompositions), not from Dynamo, so a graph of N blocks is one graph. Each graph then goes through what
the backend's `build` runs: pipeline.run to tensor-opt, pipeline.run to mem, the cpu target's compile
(disk cache off, select-layout's estimate rather than measured convolutions, so timings measure only irc).
Times are processor time of this process (time.process_time, torch at one thread), not wall time: on a
shared machine the wall clock also counts the neighbours. A pass's time includes its verification, where
the stage verifies after every pass (tensor-opt); loop and mem verify once, in the stage's time only.
"""

import argparse
import cProfile
import gc
import pstats
import time
from pathlib import Path

import torch
from torch import nn
from torch._functorch.aot_autograd import aot_function, make_boxed_func

from irc import report, targets
from irc.bench.models import BasicBlock, EncoderBlock
from irc.frontend.decompositions import decomposition_table
from irc.frontend.fx_import import import_graph
from irc.ir import print_module
from irc.ir.passes import Instrument
from irc.lowering import pipeline
from irc.lowering.pipeline import Plan
from irc.options import Options
from irc.targets.args import graph_args

CASES = ("transformer-fwd", "transformer-train", "conv-fwd", "conv-train")
STAGES = ("tensor", "tensor-opt", "loop", "mem", "llvm")


def _blocks(case: str, n: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    if case.startswith("transformer"):
        model = nn.Sequential(*(EncoderBlock(64, 4, 128, 0.0) for _ in range(n)))
        return model, (torch.randn(2, 16, 64),)
    model = nn.Sequential(*(BasicBlock(16, 16) for _ in range(n))).train(case.endswith("train"))
    return model, (torch.randn(2, 16, 16, 16),)


def capture(case: str, n: int) -> list[tuple[str, torch.fx.GraphModule]]:
    """The FX graphs AOT autograd hands a backend for `case` with `n` blocks: [(kind, graph)]."""
    model, inputs = _blocks(case, n)
    train = case.endswith("train")
    state = [(name, p.detach().requires_grad_(train)) for name, p in model.named_parameters()]
    state += list(model.named_buffers())  # graph inputs, as AOT autograd lifts them under Dynamo
    names, values = [name for name, _ in state], [v for _, v in state]
    graphs: list[tuple[str, torch.fx.GraphModule]] = []

    def compiler(kind):
        def capture_graph(gm, _inputs):
            graphs.append((kind, gm))
            return make_boxed_func(gm.forward)

        return capture_graph

    def step(*args):
        return torch.func.functional_call(model, dict(zip(names, args[: len(names)])), args[len(names) :])

    fn = aot_function(
        step, fw_compiler=compiler("forward"), bw_compiler=compiler("backward"), decompositions=decomposition_table()
    )
    if train:
        fn(*values, *inputs).sum().backward()
    else:
        with torch.no_grad():
            fn(*values, *inputs)
    if not train:
        graphs[:] = [("inference", gm) for _, gm in graphs]
    return graphs


class CpuSeconds(Instrument):
    """Each pass's processor time (the machine is shared: wall time measures the neighbours too)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def before(self, p, module) -> None:
        self.t0 = time.process_time()

    def after(self, p, module) -> None:
        self.seconds[p.name] = self.seconds.get(p.name, 0.0) + time.process_time() - self.t0


def compile_graph(gm: torch.fx.GraphModule, opts: Options) -> tuple[dict[str, float], dict[str, float], str]:
    """Compile one graph as the backend's build does: (stage -> processor seconds, pass -> processor seconds,
    the mem stage's text). tensor-opt verifies after every pass, as `build` asks; loop and mem once each."""
    seconds: dict[str, float] = {}
    t0 = time.process_time()
    result = import_graph(gm, opts.eager_ops)
    seconds["tensor"] = time.process_time() - t0
    module, plan, passes = result.module, Plan(layout="auto"), CpuSeconds()
    for start, stop in (("tensor", "tensor-opt"), ("tensor-opt", "loop"), ("loop", "mem")):
        t0 = time.process_time()
        pipeline.run(module, plan, start=start, stop=stop, verify=stop == "tensor-opt", instruments=[passes])
        seconds[stop] = time.process_time() - t0
    mem = print_module(module)
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    rep = report.GraphReport(index=-1, dynamo_graph=-1, kind="bench")
    t0 = time.process_time()
    targets.get("cpu").compile(module, graph_args(placeholders, result.constants), opts, rep)
    seconds["llvm"] = time.process_time() - t0
    return seconds, passes.seconds, mem


def fx_nodes(gm: torch.fx.GraphModule) -> int:
    return sum(1 for node in gm.graph.nodes if node.op == "call_function")


def measure(case: str, n: int, opts: Options, dump_mem: Path | None = None) -> dict:
    """One row: the case's graphs for `n` blocks compiled; seconds summed over its graphs."""
    row = {"case": case, "n": n, "nodes": 0, "stages": {}, "passes": {}}
    for kind, gm in capture(case, n):
        row["nodes"] += fx_nodes(gm)
        gc.collect()
        gc.freeze()  # a collection during this compile scans its own objects, not every earlier graph's again
        seconds, passes, mem = compile_graph(gm, opts)
        gc.unfreeze()
        for table, new in ((row["stages"], seconds), (row["passes"], passes)):
            for name, dt in new.items():
                table[name] = table.get(name, 0.0) + dt
        if dump_mem is not None:
            dump_mem.mkdir(parents=True, exist_ok=True)
            (dump_mem / f"{case}-n{n:02d}-{kind}.mlir").write_text(mem)
    return row


def print_rows(rows: list[dict]) -> None:
    """Per case: a table of microseconds per FX node, stages then passes, one column per N."""
    for case in dict.fromkeys(r["case"] for r in rows):
        mine = [r for r in rows if r["case"] == case]
        print(f"\n{case}: processor microseconds per FX node")
        print(
            f"  {'':22s}"
            + "".join(f"{'N=' + str(r['n']):>10s}" for r in mine)
            + f"{'N' + str(mine[-1]['n']) + '/N' + str(mine[0]['n']):>10s}"
        )
        print(f"  {'FX nodes':22s}" + "".join(f"{r['nodes']:>10d}" for r in mine))
        total = lambda r: sum(r["stages"].values())  # noqa: E731
        print(f"  {'total processor s':22s}" + "".join(f"{total(r):>10.2f}" for r in mine))
        names = [s for s in STAGES] + sorted(
            {p for r in mine for p in r["passes"]}, key=lambda p: -mine[-1]["passes"].get(p, 0)
        )
        for i, name in enumerate(names):
            if i == len(STAGES):
                print("  per pass:")
            table = "stages" if i < len(STAGES) else "passes"
            per = [r[table].get(name, 0.0) / r["nodes"] * 1e6 for r in mine]
            ratio = per[-1] / per[0] if per[0] else float("nan")
            print(f"  {name[:22]:22s}" + "".join(f"{v:>10.1f}" for v in per) + f"{ratio:>9.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-n", type=int, default=16, help="the largest number of blocks (powers of two up to it)")
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--dump-mem", type=Path, help="write every graph's mem stage here")
    ap.add_argument(
        "--profile", action="store_true", help="cProfile the largest N of each case; print the top functions"
    )
    args = ap.parse_args()
    opts = Options.resolve(options={"cache": False})
    ns = [1 << k for k in range(args.max_n.bit_length()) if 1 << k <= args.max_n]
    torch.set_num_threads(1)
    measure(CASES[0], 1, opts)  # warm up: first-use imports and caches would count against the first row
    rows = []
    for case in args.cases.split(","):
        for n in ns:
            if args.profile and n == ns[-1]:
                prof = cProfile.Profile()
                prof.enable()
                rows.append(measure(case, n, opts, args.dump_mem))
                prof.disable()
                pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
            else:
                rows.append(measure(case, n, opts, args.dump_mem))
            print(f"{case} N={n}: {rows[-1]['nodes']} FX nodes, {sum(rows[-1]['stages'].values()):.2f} s", flush=True)
    print_rows(rows)


if __name__ == "__main__":
    main()
