"""Warm starts: a graph compiled before, by this process or another, skips import, tensor-opt and lowering.

After a compile that ran on its target, `remember` keeps a small record on disk (cache kind "graph") keyed by
the FX graph as AOT autograd hands it over: every node (op, target, arguments) with its example metadata, the options, the graph
kind, and the versions of torch and of irc's sources. The record names the mem stage that compile reached (the
key of the mem-stage cache's entry, lowering/pipeline.py) and what the import found (how outputs map to results,
the inputs the graph writes, the report's counts). `recall` gives it back; the backend then loads that mem stage
and hands it to the target, whose own records (the cpu target's emission record) skip emission as well: a warm
start is left with loading cached object code.

Only static graphs without frozen parameters are recorded: a symbolic size's meaning is the ShapeEnv's, not its
printed name, and a frozen graph's compile depends on the parameters' values.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import torch

from irc import cache, targets
from irc.options import Options

VERSION = "1"  # bump when a record's meaning changes


@dataclass
class Record:
    mem_key: str  # lowering.pipeline.run's cache_key of the graph's tensor-opt module and arguments
    matmul: str  # the Plan's matmul lowering that built it
    outputs: list  # ImportResult.outputs after the replayed views were dropped
    writes: list  # ImportResult.writes, likewise
    imported: dict[str, int] = field(default_factory=dict)
    fallbacks: list = field(default_factory=list)  # the report's (aten overload, reason)
    attention: int = 0
    layouts: list = field(default_factory=list)

    def __post_init__(self):
        self.outputs = [tuple(o) for o in self.outputs]
        self.writes = [tuple(w) for w in self.writes]
        self.fallbacks = [tuple(f) for f in self.fallbacks]


def _meta(v) -> str:
    if isinstance(v, torch.Tensor):
        return f"{v.dtype}{tuple(v.shape)}{v.stride()}{v.device}{v.requires_grad}"
    if isinstance(v, list | tuple):
        return "(" + ",".join(map(_meta, v)) + ")"
    if v is None or isinstance(v, bool | int | float | str):
        return repr(v)
    return type(v).__name__


def key(gm: torch.fx.GraphModule, kind: str, opts: Options) -> str | None:
    """The record's key for this graph, or None when it gets no record (dynamic sizes; options that want every
    stage built afresh: no cache, dumps, verification)."""
    if not opts.cache or opts.dump_dir or opts.verify or opts.mode == "max-autotune":
        return None
    nodes = []  # the graph as its nodes (gm.code would generate a lazy graph module's Python code, which is slow)
    for n in gm.graph.nodes:
        v = getattr(gm, n.target) if n.op == "get_attr" else n.meta.get("val")
        if any(isinstance(x, torch.SymInt | torch.SymFloat | torch.SymBool) for x in _flat(v)):
            return None
        nodes.append(f"{n.op} {n.name} {n.target} {n.args} {n.kwargs}: {_meta(v)}")
    parts = (
        VERSION,
        kind,
        repr(opts),
        targets.get(opts.target).rules([], opts).facts,
        torch.__version__,
        "\n".join(nodes),
        cache.sources("frontend", "lowering", "ir", "dialects", "targets"),
    )
    return cache.make_key("graph", *parts)


def _flat(v):
    if isinstance(v, torch.Tensor):
        yield from v.shape
        yield from v.stride()
    elif isinstance(v, list | tuple):
        for x in v:
            yield from _flat(x)
    else:
        yield v


def recall(graph_key: str) -> Record | None:
    found = cache.get_json("graph", graph_key)
    if found is None:
        return None
    try:
        return Record(**found)
    except TypeError as e:
        cache.log.warning("graph record unusable (%s); compiling", e)
        return None


def remember(graph_key: str, record: Record) -> None:
    try:
        value = json.loads(json.dumps(asdict(record)))
    except (TypeError, ValueError) as e:  # an output constant JSON cannot hold: no record
        cache.log.info("graph record not kept (%s)", e)
        return
    if value["outputs"] != [list(o) for o in record.outputs]:  # JSON changed a constant (a tuple, a float key)
        return
    cache.put_json("graph", graph_key, value)


__all__ = ["Record", "key", "recall", "remember"]
