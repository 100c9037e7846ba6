"""What the backend logs (irc.log topics) about each Dynamo graph and each graph it compiles.

stages      INFO one line per graph: time of each stage and the total; DEBUG each pass's time
fallbacks   INFO aten calls run eagerly, graphs run eagerly, kernels on the reference evaluator
fusion      INFO kernels fused and externs; DEBUG each fusion refusal with its reason
cache       INFO the mem stage and the machine code from the disk cache, or compiled afresh
recompiles  INFO Dynamo compiling a frame it compiled before, with the guard that failed
"""

from irc import report
from irc.log import get

stages, fallbacks, fusion, cache, recompiles = (
    get(t) for t in ("stages", "fallbacks", "fusion", "cache", "recompiles")
)


def graph_name(rep: report.GraphReport) -> str:
    return f"graph {rep.index} ({rep.kind})"


def dynamo_graph(gm, number: int) -> None:
    """A backend call: say so, and when Dynamo compiles a frame again, that it is a recompile and why."""
    cid = getattr(gm, "meta", {}).get("dynamo_compile_id")
    stages.debug("Dynamo graph %d (compile id %s): %d FX nodes", number, cid, len(gm.graph.nodes))
    if cid is None or not cid.frame_compile_id:
        return
    how = (number, cid.frame_id, cid.frame_compile_id, _guard_failure(cid.frame_id))
    recompiles.info("Dynamo graph %d recompiles frame %d (compile %d of that frame)%s", *how)


def _guard_failure(frame_id: int) -> str:
    """The latest guard failure Dynamo recorded for this frame (torch internals: best effort)."""
    try:
        from torch._dynamo.utils import guard_failures

        reasons = [r for rs in guard_failures.values() for r in rs if str(r).startswith(f"{frame_id}/")]
        return f": {reasons[-1]}" if reasons else ""
    except Exception:  # noqa: BLE001 - a private API that may move
        return ""


def passes(rep: report.GraphReport, seconds: dict[str, float]) -> None:
    for p, s in seconds.items():
        stages.debug("%s: pass %s %.2f ms", graph_name(rep), p, s * 1e3)


def graph_done(rep: report.GraphReport) -> None:
    """Everything the report holds about one compiled graph, under its topic."""
    name = graph_name(rep)
    times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in rep.stage_seconds.items())
    where = f"runs eagerly ({rep.eager_graph})" if rep.eager_graph else f"runs on {rep.target or 'the reference'}"
    stages.info(
        "%s: %d FX nodes, compiled in %.1f ms (%s); %s", name, rep.nodes, rep.compile_seconds * 1e3, times, where
    )
    for target, reason in rep.fallbacks:
        fallbacks.info("%s: %s runs eagerly: %s", name, target, reason)
    for what, reason in rep.target_fallbacks:
        fallbacks.info("%s: %s runs on the reference evaluator: %s", name, what, reason)
    if rep.fused_kernels or rep.externs:
        externs = ", ".join(sorted(set(rep.externs))) or "none"
        counts = (rep.fused_kernels, len(rep.externs), externs, len(rep.fusion_refusals))
        fusion.info("%s: %d fused kernels, %d externs (%s), %d refusals", name, *counts)
        for r in rep.fusion_refusals:
            fusion.debug("%s: unfused %s", name, r)
    if rep.cache_hit is not None:
        cache.info("%s: machine code %s", name, "from the disk cache (hit)" if rep.cache_hit else "compiled (miss)")


def eager_graph(rep: report.GraphReport, error: bool) -> None:
    """A whole graph runs eagerly: an irc error is a warning; an unsupported construct is information."""
    msg = "%s runs eagerly: %s"
    (fallbacks.warning if error else fallbacks.info)(msg, graph_name(rep), rep.eager_graph)
