"""The stages as irc-opt sees them: which stage a module is at, which passes lead from one stage to another, and --list-passes."""

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from .pass_spec import PassFactory, options_of


def detect_stage(module: ModuleOp) -> str:
    """The stage the module records (lowering/pipeline.py STAGE_ATTR), else `mem` when a mem op appears, `loop`
    when a loop op does, else `tensor`."""
    from irc.lowering.pipeline import STAGE_ATTR

    if isinstance(recorded := module.attributes.get(STAGE_ATTR), StringAttr):
        return recorded.data
    names = {op.name.split(".", 1)[0] for op in module.walk()}
    return "mem" if "mem" in names else "loop" if "loop" in names else "tensor"


def stage_passes(module: ModuleOp, start: str, stop: str) -> tuple[ModulePass, ...]:
    """The passes that take `module`, at stage `start`, to stage `stop`, as the backend ran them: the plan the
    module records (its target's rules over its arguments: compiler.plan_of); ValueError when `stop` comes first."""
    from irc.compiler import plan_of

    try:
        return plan_of(module).passes(start, stop)
    except ValueError as e:
        raise ValueError(f"--{e}") from None


XDSL_SUMMARIES = {"cse": "Common subexpression elimination (xDSL's).", "dce": "Dead code elimination (xDSL's)."}


def _summary(cls: type) -> str:
    if cls.name in XDSL_SUMMARIES:
        return XDSL_SUMMARIES[cls.name]
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(cls.__name__ + "("):  # a dataclass's generated signature is no description
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def list_passes(available: dict[str, PassFactory]) -> str:
    """--list-passes: each stage with the pipeline that produces it, then every pass with its options."""
    from irc.lowering import PASSES, STAGE_ORDER, STAGES

    lines = [f"stages: {' -> '.join(STAGE_ORDER)}  (fx and tensor come from the frontend)"]
    for stage, passes in STAGES.items():
        lines.append(f"  {stage:<11} -p {','.join(p.name for p in passes)}")
    groups = [
        ("passes", [n for n in available if n in PASSES]),
        (
            "test passes (for irc-opt's own tests; the compiler never runs them)",
            [n for n in available if n not in PASSES],
        ),
    ]
    for title, names in groups:
        lines.append(f"{title}:")
        for name in names:
            cls = available[name]()
            stage = next((s for s, ps in STAGES.items() if any(p.name == name for p in ps)), None)
            lines.append(f"  {name}" + (f"  [{stage}]" if stage else ""))
            if summary := _summary(cls):
                lines.append(f"      {summary}")
            lines.append(f"      options: {options_of(cls)}")
    return "\n".join(lines) + "\n"
