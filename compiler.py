"""The driver: one graph's compile, from a tensor-stage module to a runnable graph, for every caller.

    run = compiler.build(module, args, opts, report)      # the backend, compile_function, benchmarks
    plan = compiler.plan_of(module)                        # irc-opt and irc-fuzz: the plan a dumped stage records

`build` records on the module what continuing it needs (`record`: the target, the options that change the
passes, the arguments its rules read, how the caller lays out each input), asks the target for its rules once,
runs tensor-opt, then for each candidate lowering of the matrix products the rules name, lowers to the mem stage
and asks the target to compile it; with two or more candidates the target chooses. The target answers and
never calls back; the driver writes the report from its notes.

The fallback policy lives here and nowhere else: a pass that fails in tensor-opt fails the graph (the caller runs
it eagerly); one that fails in loop or mem sends the graph to the reference target at tensor-opt; a target that
cannot take the mem stage (TargetError) leaves it to the reference at the mem stage. options={"strict": True}
raises instead of each fallback.
"""

from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import torch
from xdsl.dialects.builtin import ArrayAttr, BoolAttr, DictionaryAttr, ModuleOp, StringAttr

from irc import cache, report, targets
from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module
from irc.ir.check import ResultMismatch
from irc.log import get as logger
from irc.log import stage as progress_stage
from irc.lowering import pipeline
from irc.lowering.output_layout import INPUT_ATTR, memory_order
from irc.lowering.output_layout import record as record_orders
from irc.lowering.pipeline import Lowered, Plan
from irc.lowering.select_layout import layout_notes
from irc.options import Options
from irc.targets import ArgSpec, Notes, Run, TargetError

PLAN, ARGS = "irc.plan", "irc.args"  # module attributes: what the driver needs to continue a stage
stages_log, fallbacks_log = logger("stages"), logger("fallbacks")


def record(module: ModuleOp, args: list[ArgSpec], opts: Options, matmul: str | None = None) -> None:
    """Put on `module` what continuing it needs: the target and the options that change the passes (irc.plan),
    the arguments the target's rules read (irc.args) and how the caller lays out each input (@main's
    irc.input_layout, which fold-permutes reads)."""
    matmul = matmul or ("loops" if opts.matmul == "loops" else "extern")
    module.attributes[PLAN] = DictionaryAttr(
        {
            "target": StringAttr(opts.target),
            "attention": BoolAttr.from_bool(opts.attention),
            "layout": StringAttr(opts.layout),
            "matmul": StringAttr(matmul),
            "prepack": StringAttr({None: "auto", True: "all", False: "none"}[opts.prepack]),
        }
    )
    module.attributes[ARGS] = ArrayAttr([a.to_attr() for a in args])
    orders = [(memory_order(a.sizes, a.strides) if a.kind == "tensor" else None) or () for a in args]
    record_orders(module, INPUT_ATTR, orders)


def plan_of(module: ModuleOp) -> Plan:
    """The plan the backend ran on `module`: its recorded options and its target's rules over its recorded
    arguments; `Plan()` for a module that records none (IR written by hand)."""
    rec = module.attributes.get(PLAN)
    if not isinstance(rec, DictionaryAttr):
        return Plan()
    d = rec.data
    opts = replace(
        Options(),
        target=d["target"].data,
        attention=bool(d["attention"].value.data),
        layout=d["layout"].data,
        prepack={"all": True, "none": False}.get(d["prepack"].data) if "prepack" in d else None,
    )
    args = [ArgSpec.from_attr(a) for a in module.attributes[ARGS].data] if ARGS in module.attributes else []
    rules = targets.get(opts.target).rules(args, opts)
    return Plan(attention=opts.attention, layout=opts.layout, matmul=d["matmul"].data, rules=rules)


@dataclass
class Attempt:
    """One candidate lowering compiled: its run (None when lowering failed) and what the report takes from it."""

    matmul: str
    run: Run | None = None
    notes: Notes = field(default_factory=Notes)
    lowered: Lowered | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    on_target: bool = False  # the target compiled it (not the reference after a TargetError)


def build(
    module: ModuleOp,
    args: list[ArgSpec],
    opts: Options,
    rep: report.GraphReport,
    dump=None,
    *,
    instruments=(),
    refold=None,
    built: dict[str, str] | None = None,
) -> Run:
    """A tensor-stage module (consumed) -> a runnable graph, under the fallback policy above.

    dump(stage, text_of) writes a stage's text; `instruments` run around every tensor-opt pass (the result
    checks of options={"verify": True}); `refold` (a frozen graph's) folds the constants tensor-opt's rewrites
    computed, appended to @main's arguments, and returns their values (the caller passes them after the others);
    `built`, when given, receives the mem stage's cache key and the matmul lowering of a graph that ran on its
    target (what a warm-start record keeps)."""
    dump = dump or (lambda stage, text_of: None)
    target = targets.get(opts.target)
    record(module, args, opts)
    rules = target.rules(args, opts)
    plan = Plan(attention=opts.attention, layout=opts.layout, rules=rules)
    stage_dump = lambda stage, m: dump(stage, lambda: print_module(m))  # noqa: E731
    progress_stage("tensor-opt")
    try:
        # the verifier after every pass only with options={"verify": True}; else once at the end of each stage
        done = pipeline.run(
            module, plan, stop="tensor-opt", dump=stage_dump, verify=opts.verify, instruments=instruments
        )
    except ResultMismatch as e:  # an irc bug: the graph runs eagerly (or strict raises), the report names the pass
        rep.verify_failure = str(e)
        raise
    rep.stage_seconds["tensor-opt"] = done.seconds["tensor-opt"]
    if refold is not None and (folded := refold(module)):
        args = [*args, *(replace(ArgSpec.of(t, f"folded{i}"), stable=True, example=t) for i, t in enumerate(folded))]
        record(module, args, opts)
        rules = target.rules(args, opts)
        plan = replace(plan, rules=rules)
        stage_dump("tensor-opt", module)
    rep.attention = sum(op.name == "tn.sdpa" for op in module.walk())
    rep.layouts = layout_notes(module)
    _log_passes(rep, done.pass_seconds)
    label = f"graph{rep.index}" if rep.index >= 0 else ""
    if target.stage == "tensor-opt":
        run, notes = target.compile(module, args, opts, label=label)
        _write(rep, target.name, opts, notes)
        return run

    text = print_module(module)
    fresh = [module]  # the first lowering consumes `module`, later ones (and the fallback) parse `text`

    def module_copy() -> ModuleOp:
        return fresh.pop() if fresh else parse_module(make_context(ALL_DIALECTS), text)

    use_cache = opts.cache and not opts.dump_dir  # a dump wants every stage lowered afresh
    # targets lower differently, and so does one target on machines whose libraries differ
    mem_key = cache.make_key(text, repr(args), target.name, rules.facts) if use_cache else None
    candidates, known, choice_key = rules.matmuls(module), None, None
    if len(candidates) > 1 and opts.cache:  # the target chose among these before, on this machine and thread count
        choice_key = cache.make_key("choice", text, repr(args), target.name, rules.facts, str(torch.get_num_threads()))
        known = cache.get_json("choice", choice_key)
        if known is not None and known.get("matmul") in candidates:
            candidates = (known["matmul"],)

    def attempt(matmul: str) -> Attempt:
        progress_stage("loop+mem")
        mem = module_copy()
        record(mem, args, opts, matmul)
        a = Attempt(matmul)
        try:
            done = pipeline.run(
                mem, replace(plan, matmul=matmul), start="tensor-opt", dump=stage_dump, cache_key=mem_key
            )
        except Exception as e:  # a lowering bug: the graph still runs, on the reference at tensor-opt
            if opts.strict:
                raise
            fallbacks_log.warning("irc: lowering graph %d failed (%s); it runs on the reference target", rep.index, e)
            a.notes.target_fallbacks.append(("graph", f"lowering failed: {type(e).__name__}: {e}"))
            return a
        a.seconds["mem (cached)" if done.cached else "loop+mem"] = sum(done.seconds.values())
        a.lowered = done.lowered
        _log_passes(rep, done.pass_seconds)
        try:
            a.run, a.notes = target.compile(mem, args, opts, key=done.key, label=label)
            a.on_target = True
        except TargetError as e:  # the target cannot take this @main: the mem-stage reference runs it
            if opts.strict:
                raise
            fallbacks_log.warning(
                "irc: the %s target cannot take graph %d (%s); it runs on the mem-stage reference",
                target.name,
                rep.index,
                e,
            )
            a.run, _ = targets.get("reference").compile(mem, args, opts)
            a.notes = Notes(target_fallbacks=[("graph", str(e))])
        return a

    attempts = [attempt(m) for m in candidates]
    compiled = [a for a in attempts if a.on_target]
    note = None
    if len(compiled) > 1:
        choice, why = target.choose({a.matmul: a.run for a in compiled}, args)
        if choice_key is not None and cache.quiet():
            cache.put_json("choice", choice_key, {"matmul": choice, "note": why})
        chosen, note = next(a for a in compiled if a.matmul == choice), f"matmul: {why} (measured)"
    elif compiled:
        chosen = compiled[0]
        if known is not None:
            note = f"matmul: {known['note']} (from the disk cache)"
    else:
        chosen = next((a for a in attempts if a.run is not None), None)
    if chosen is None:  # lowering failed: the reference runs the tensor-opt stage
        progress_stage("reference")
        run, notes = targets.get("reference").compile(module_copy(), args, opts)
        notes.target_fallbacks = [f for a in attempts for f in a.notes.target_fallbacks]
        _write(rep, "reference", opts, notes)
        return run
    rep.stage_seconds.update(chosen.seconds)
    _report_lowered(rep, chosen.lowered)
    _write(rep, target.name, opts, chosen.notes)
    if note is not None:
        rep.mode_notes.append(note)
    if built is not None and mem_key is not None and chosen.on_target:
        built.update(mem_key=mem_key, matmul=chosen.matmul)
    return chosen.run


def resume(
    mem: ModuleOp, args: list[ArgSpec], opts: Options, rep: report.GraphReport, lowered: Lowered, key: str | None = None
) -> Run:
    """A mem-stage module (a warm start's, from the disk cache) compiled by the target; raises what it raises."""
    target = targets.get(opts.target)
    run, notes = target.compile(mem, args, opts, key=key, label=f"graph{rep.index}" if rep.index >= 0 else "")
    _report_lowered(rep, lowered)
    _write(rep, target.name, opts, notes)
    return run


# the notes the report takes field for field (stage_seconds merge into the report's; call_source is dumped)
_NOTED = tuple(f.name for f in fields(Notes) if f.name not in ("stage_seconds", "call_source"))


def _write(rep: report.GraphReport, target: str, opts: Options, notes: Notes) -> None:
    """The target's notes into the report (the same objects: a runtime fills extern_paths as calls decide)."""
    rep.target, rep.mode = target, opts.mode
    for name in _NOTED:
        setattr(rep, name, getattr(notes, name))
    rep.stage_seconds.update(notes.stage_seconds)
    if rep.dump_dir and notes.call_source:  # beside the stages: what one call runs, as Python
        Path(rep.dump_dir, "call.py").write_text(notes.call_source)


def _report_lowered(rep: report.GraphReport, low: Lowered) -> None:
    rep.fused_kernels, rep.externs = low.kernels, list(low.externs)
    rep.planned_peak_bytes, rep.intermediate_bytes = low.arena_bytes, low.intermediate_bytes
    rep.fusion_refusals = list(low.refusals)


def _log_passes(rep: report.GraphReport, seconds: dict[str, float]) -> None:
    for p, s in seconds.items():
        stages_log.debug("graph %d (%s): pass %s %.2f ms", rep.index, rep.kind, p, s * 1e3)


__all__ = ["ARGS", "PLAN", "build", "plan_of", "record", "resume"]
