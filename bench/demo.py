"""The demo: compile every demo model with irc, check it against eager, and report what irc did and how fast.

    python -m irc.bench.demo                       # every model
    python -m irc.bench.demo --models mlp-b32,graph-break --repeats 3
    python -m irc.bench.demo --list

For each model: the forward pass (and the further sizes of the dynamic ones) against eager,
a training step (loss, every gradient, BatchNorm statistics, parameters after an SGD step)
for the trainable ones, the graphs irc compiled, the aten calls it imported, every eager
fallback with its reason, compile time, and the median speed against eager. A model that
fails is reported and the demo goes on; the exit status is 1 if any model failed.
"""

import argparse
import os
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

import torch

import irc
from irc import report

from .check import (
    FORWARD_TOL,
    Mismatch,
    assert_close,
    compare_speed,
    loss_fn,
    targets_for,
    train_step,
    twin,
)
from .models import DEMOS, Demo
from .ties import judge_step


@dataclass
class Outcome:
    name: str
    ok: bool = True
    problems: list[str] = field(default_factory=list)
    graphs: list[report.GraphReport] = field(default_factory=list)
    compile_wall: float = 0.0  # first calls: Dynamo + AOT autograd + irc + one run
    speed: dict[str, tuple[float, float]] = field(default_factory=dict)  # what -> (eager s, irc s)
    # the differences beyond tolerance that float64 steps showed to be rounding ties (ties.judge_step)
    ties: list[str] = field(default_factory=list)

    def fail(self, msg: str) -> None:
        self.ok = False
        self.problems.append(msg)


def say(msg: str = "") -> None:
    print(msg, flush=True)


def _ms(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def _load() -> str:
    """The machine's load, since timings mean little when other processes compete for the cores."""
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:
        return f"{os.cpu_count()} cores"


def _compile(fn, demo: Demo, opts: dict):
    return torch.compile(fn, backend=irc.backend, dynamic=demo.dynamic, options=opts)


def check_forward(demo: Demo, out: Outcome, opts: dict, repeats: int) -> None:
    model, inputs = demo.make()
    mine = twin(model)
    compiled = _compile(mine, demo, opts)
    mark = report.mark()
    with torch.no_grad():
        want = model(*inputs)
        t0 = time.perf_counter()
        got = compiled(*inputs)
        first = time.perf_counter() - t0
        out.compile_wall += first
        say(f"  forward: first call {first:.2f} s (Dynamo + AOT autograd + irc compile + one run)")
        err = assert_close("forward output", got, want, FORWARD_TOL)
        if isinstance(model, torch.nn.Module):  # train-mode BatchNorm updates running statistics in the forward
            for (n, b), (_, b2) in zip(model.named_buffers(), mine.named_buffers()):
                err = max(err, assert_close(f"buffer {n} after forward", b2, b, FORWARD_TOL))
        sizes = [tuple(inputs[0].shape)]
        for more in demo.more_inputs():
            err = max(
                err,
                assert_close(
                    f"forward output at input shape {tuple(more[0].shape)}", compiled(*more), model(*more), FORWARD_TOL
                ),
            )
            sizes.append(tuple(more[0].shape))
        shapes = f" at input shapes {', '.join(map(str, sizes))}" if len(sizes) > 1 else ""
        say(f"  forward: matches eager{shapes} (max abs error {err:.2g})")
        graphs = report.reports_since(mark).graphs
        out.graphs += graphs
        dynamo = len({g.dynamo_graph for g in graphs})
        if demo.expect_dynamo_graphs is not None and dynamo != demo.expect_dynamo_graphs:
            out.fail(f"Dynamo produced {dynamo} graph(s), expected {demo.expect_dynamo_graphs}")
        if repeats:
            out.speed["forward"] = compare_speed(lambda: model(*inputs), lambda: compiled(*inputs), repeats)


def check_train(demo: Demo, out: Outcome, opts: dict, repeats: int) -> None:
    model, inputs = demo.make()
    mine, before = twin(model), twin(model)  # `before`: for the float64 steps that judge a difference
    eager_step, compiled_step = loss_fn(model), _compile(loss_fn(mine), demo, opts)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))  # on a twin: a train-mode forward moves BatchNorm statistics
    mark = report.mark()
    t0 = time.perf_counter()
    got = train_step(mine, inputs, compiled_step, target)
    first = time.perf_counter() - t0
    out.compile_wall += first
    want = train_step(model, inputs, eager_step, target)
    say(f"  train step: first call {first:.2f} s (compiles the forward and the backward)")
    verdict = judge_step(before, inputs, target, got, want)  # raises Mismatch unless a match or a rounding tie
    if verdict.tie:
        out.ties.append(verdict.tie)
        say(f"  train step: match ({verdict.tie})")
    else:
        errs = ", ".join(f"{k} {v:.2g}" for k, v in verdict.errs.items())
        say(
            f"  train step: matches eager: loss, {len(want.grads)} gradients, {len(want.buffers)} buffers, "
            f"parameters after an SGD step, the loss after it (max abs errors: {errs})"
        )
    out.graphs += report.reports_since(mark).graphs
    if repeats:

        def step(fn, m):
            def run():
                m.zero_grad(set_to_none=True)
                fn(*inputs, target).backward()

            return run

        out.speed["train step"] = compare_speed(step(eager_step, model), step(compiled_step, mine), repeats)


def describe(out: Outcome) -> list[str]:
    g = out.graphs
    lines = []
    kinds = Counter(x.kind for x in g)
    dynamo = len({x.dynamo_graph for x in g})
    kind_text = ", ".join(f"{n} {k}" for k, n in kinds.items())
    lines.append(f"  graphs: {len(g)} compiled ({kind_text}) from {dynamo} Dynamo graph(s)")
    imported = Counter()
    for x in g:
        imported.update(x.imported)
    fallbacks = Counter((t, r) for x in g for t, r in x.fallbacks)
    lines.append(
        f"  ops: {sum(imported.values())} aten calls imported ({len(imported)} distinct), "
        f"{sum(fallbacks.values())} eager fallback calls ({len({t for t, _ in fallbacks})} distinct ops)"
    )
    for (t, r), n in sorted(fallbacks.items()):
        lines.append(f"    fallback {t} x{n}: {r}")
    for x in g:
        if x.eager_graph:
            lines.append(f"    graph {x.index} ({x.kind}) runs entirely eagerly: {x.eager_graph}")
    irc_s = sum(x.compile_seconds for x in g)
    stages = Counter()
    for x in g:
        stages.update(x.stage_seconds)
    per_stage = ", ".join(f"{k} {v:.2f} s" for k, v in stages.items())
    lines.append(
        f"  compile: irc {irc_s:.2f} s in its own stages ({per_stage or 'none'}); "
        f"first calls {out.compile_wall:.2f} s wall in all (with Dynamo, AOT autograd and the runs)"
    )
    for what, (e, c) in out.speed.items():
        lines.append(f"  speed {what}: eager {_ms(e)}, irc {_ms(c)} -> {e / c:.2f}x eager (median)")
    return lines


def run_demo(demo: Demo, opts: dict, repeats: int, train: bool) -> Outcome:
    out = Outcome(demo.name)
    torch._dynamo.reset()
    try:
        check_forward(demo, out, opts, repeats)
        if train and demo.train:
            torch._dynamo.reset()
            check_train(demo, out, opts, repeats)
    except Mismatch as e:
        out.fail(f"MISMATCH: {e}")
    except Exception as e:  # noqa: BLE001 - the demo never stops on one model
        out.fail(f"ERROR: {type(e).__name__}: {e}")
        say("".join(traceback.format_exception(e, limit=-6)).rstrip())
    finally:
        torch._dynamo.reset()
    for line in describe(out):
        say(line)
    for p in out.problems:
        say(f"  FAILED: {p}")
    return out


def summary(outcomes: list[Outcome]) -> list[str]:
    rows = [("model", "result", "graphs", "fallback ops", "compile", "forward", "train step")]
    for o in outcomes:
        fb = len({t for x in o.graphs for t, _ in x.fallbacks})
        eager = sum(1 for x in o.graphs if x.eager_graph)
        speed = {k: f"{e / c:.2f}x" for k, (e, c) in o.speed.items()}
        result = ("ok (rounding tie)" if o.ties else "ok") if o.ok else "FAILED"
        rows.append(
            (
                o.name,
                result,
                str(len(o.graphs)),
                f"{fb}" + (f" (+{eager} eager graphs)" if eager else ""),
                f"{o.compile_wall:.1f} s",
                speed.get("forward", "-"),
                speed.get("train step", "-"),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m irc.bench.demo", description=__doc__.split("\n")[0])
    p.add_argument("--models", help="comma-separated demo names (default: all; see --list)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per measurement, median reported (0: no timing)")
    p.add_argument("--no-train", action="store_true", help="skip the training steps")
    p.add_argument("--strict", action="store_true", help="irc's own compile errors raise instead of running eagerly")
    p.add_argument("--list", action="store_true", help="list the demo models and exit")
    args = p.parse_args(argv)
    if args.list:
        for d in DEMOS:
            say(f"{d.name:24} {d.description}")
        return 0
    demos = list(DEMOS)
    if args.models:
        names = [n.strip() for n in args.models.split(",") if n.strip()]
        known = {d.name: d for d in DEMOS}
        if unknown := [n for n in names if n not in known]:
            p.error(f"unknown model(s) {', '.join(unknown)}; valid: {', '.join(known)}")
        demos = [known[n] for n in names]
    opts = {"strict": True} if args.strict else {}
    say(
        f"irc demo: {len(demos)} model(s), torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"median of {args.repeats} timed runs, eager and irc alternating; {_load()}"
    )
    outcomes = []
    t0 = time.perf_counter()
    for i, d in enumerate(demos, 1):
        say(f"\n== [{i}/{len(demos)}] {d.name}: {d.description}")
        outcomes.append(run_demo(d, opts, args.repeats, not args.no_train))
    say(
        f"\n== summary ({time.perf_counter() - t0:.0f} s; {_load()}; speed is eager time / irc time, >1 means irc is faster)"
    )
    for line in summary(outcomes):
        say("  " + line)
    failed = [o.name for o in outcomes if not o.ok]
    tied = [o.name for o in outcomes if o.ok and o.ties]
    say(
        f"\n{len(outcomes) - len(failed)}/{len(outcomes)} models match eager"
        + (f" ({', '.join(tied)} up to a rounding tie that float64 settles)" if tied else "")
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
