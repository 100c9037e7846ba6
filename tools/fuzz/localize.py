"""Where does a program that irc gets wrong go wrong? Each stage of each graph, run by the reference
executors on the values the graph really ran on, against what the FX graph computed from them.

The first stage whose result differs is the culprit: `tensor` means the import (fx -> tensor), a
later stage the passes that produced it; when every stage agrees, the target (code generation or
its runtime) is to blame.
"""

from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module, run_passes
from irc.ir.check import compare

from .capture import capture
from .programs import Program


def localize(p: Program) -> tuple[str, str] | None:
    """(stage description, its .mlir) of the first stage that computes something else than the FX graph,
    or None when every stage of every graph agrees (or nothing could be run)."""
    from irc.compiler import plan_of
    from irc.lowering.pipeline import STAGE_ORDER
    from irc.targets.reference.check import run_any_stage

    try:
        graphs = capture(p)
    except Exception:
        return None
    ctx = make_context(ALL_DIALECTS)
    for g in graphs:
        if g.args is None or g.results is None:
            continue
        module = parse_module(ctx, g.text)
        for stage in STAGE_ORDER[1:]:
            if stage != "tensor":
                try:
                    run_passes(ctx, module, plan_of(module).stage_passes(stage))
                except Exception:
                    return f"{stage} ({g.name}): its passes raise", print_module(module)
            try:
                got = list(run_any_stage(module, "main", [a.clone() if hasattr(a, "clone") else a for a in g.args]))
            except Exception as e:
                return f"{stage} ({g.name}): it raises {type(e).__name__}: {e}", print_module(module)
            if (diff := compare(g.results, got)) is not None:
                return f"{stage} ({g.name}): {diff}", print_module(module)
    return None
