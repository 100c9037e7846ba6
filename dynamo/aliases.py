"""Outputs that are views of inputs, made by replaying their view ops on the real inputs.

AOT autograd rebuilds an output that aliases a graph input from the compiled graph's output: with
static sizes it replays the views itself, but with symbolic ones it calls
`input.as_strided(out.size(), out.stride(), out.storage_offset())`, so the compiled output must be a
view into the input's own storage with eager's layout. A copy (or a buffer of irc's) has storage
offset 0 and the rebuilt view reads the wrong elements. So such an output is not taken from the
compiled program: its chain of view ops (metadata only, no data moves) runs eagerly on the inputs, and
the program does not return it (`drop_view_results`), so it computes no copy of it either: a training
forward saves its input and each transposed weight for the backward, and irc would copy them every step
(a weight-sized transpose per layer).

Outputs that are views of another output (`return y, y.detach()`, `y.t()`, or y twice) share its memory in
eager, and AOT autograd hands them over as the compiled graph returns them (it rebuilds only views of its
inputs). So they too are replayed, on the other output as the call returns it (`output_views`): the program
would compute a copy of each (a training forward returns each ReLU's output and its detach for the backward:
an activation-sized copy per layer and step), and a write to one did not show in the other.
"""

import operator
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.fx
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._pytree import tree_flatten
from xdsl.dialects import func

from irc.targets.runtime import is_dense


def _storage(v) -> StorageWeakRef | None:
    return StorageWeakRef(v.untyped_storage()) if isinstance(v, torch.Tensor) else None


def _view_chain(node: torch.fx.Node, seen: set[torch.fx.Node]) -> bool:
    """True when every tensor `node` derives from is a placeholder or a view op (sizes may come from anywhere
    that is not a tensor computation); collects the nodes in `seen`."""
    if node in seen:
        return True
    seen.add(node)
    if node.op == "placeholder":
        return True
    if node.op != "call_function":
        return False
    is_view = isinstance(node.target, torch._ops.OpOverload) and node.target.is_view
    has_tensor = any(isinstance(v, torch.Tensor) for v in tree_flatten(node.meta.get("val"))[0])
    if has_tensor and not is_view and node.target is not operator.getitem:  # getitem: one result of split, unbind, ...
        return False
    return all(_view_chain(n, seen) for n in node.all_input_nodes)


def input_views(gm: torch.fx.GraphModule) -> tuple[list[int], Callable[[list], tuple] | None, set[int]]:
    """(indices of the outputs that are views of an input, a function of the graph's inputs returning them, the
    inputs it reads)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    inputs = {s for n in placeholders if (s := _storage(n.meta.get("val"))) is not None}
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    indices, nodes, keep = [], [], set()
    for i, o in enumerate(tree_flatten(out_node.args[0])[0]):
        if not isinstance(o, torch.fx.Node) or _storage(o.meta.get("val")) not in inputs:
            continue
        chain: set[torch.fx.Node] = set()
        if _view_chain(o, chain):
            indices.append(i)
            nodes.append(o)
            keep |= chain
    if not indices:
        return [], None, set()
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder" or n in keep:
            env[n] = graph.node_copy(n, lambda a: env[a])
    graph.output(tuple(env[n] for n in nodes))
    replay = torch.fx.GraphModule(gm, graph)
    reads = {i for i, n in enumerate(placeholders) if n in keep}
    return indices, lambda args: replay.forward(*args), reads  # forward: not nn.Module's call, whose hooks cost a call


def _is_view(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and node.target.is_view


def _sizes_only(node: torch.fx.Node, seen: set[torch.fx.Node]) -> bool:
    """True when `node` is an input or computed from inputs without tensors (a SymInt size); collects the nodes."""
    if node in seen or node.op == "placeholder":
        return True
    if node.op != "call_function" or any(isinstance(v, torch.Tensor) for v in tree_flatten(node.meta.get("val"))[0]):
        return False
    seen.add(node)
    return all(_sizes_only(n, seen) for n in node.all_input_nodes)


@dataclass(frozen=True)
class _AsStrided:
    """Another layout over the same dense span: as_strided(base, size, stride) at the base's own storage offset."""

    size: tuple[int, ...]
    stride: tuple[int, ...]


def _dense_span(node) -> tuple | None:
    """(storage, offset, numel, dtype) of an output covering its storage's elements [offset, offset + numel) without
    gaps or overlaps, static sizes only; else None. Two outputs over one span are one memory in eager in two layouts
    (a transformer's forward returns the attention output for the backward, and its head merge, a `.view` of it)."""
    v = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(v, torch.Tensor) or not all(
        isinstance(n, int) for n in (*v.shape, *v.stride(), v.storage_offset())
    ):
        return None
    if not is_dense(v.shape, v.stride()):
        return None
    return (_storage(v), v.storage_offset(), v.numel(), v.dtype) if v.numel() > 1 else None


def output_views(gm: torch.fx.GraphModule, skip=()) -> tuple[list[int], Callable[[list, list], tuple] | None, set[int]]:
    """(indices of the outputs that are views of another output, a function of the graph's inputs and its outputs
    returning them, the outputs they view: these keep eager's layout, which the replayed views assume). Such an
    output's node is another output's node (returned again) or a chain of view ops, whose other arguments are
    sizes, from one, or it covers the same dense span of memory as one (views of one value through different
    chains: `x.view(n, d)` returned twice, an output and its reshape, taken by as_strided); the outputs at `skip`
    (input_views') are neither views nor bases."""
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outs = tree_flatten(out_node.args[0])[0]
    first: dict[torch.fx.Node, int] = {}  # a returned tensor's node -> where it is first returned
    for i, o in enumerate(outs):
        if isinstance(o, torch.fx.Node) and i not in skip and isinstance(o.meta.get("val"), torch.Tensor):
            first.setdefault(o, i)
    found: dict[int, tuple[int, list[torch.fx.Node]]] = {}  # output -> (its base output, the view ops from it)
    sizes: set[torch.fx.Node] = set()
    for i, o in enumerate(outs):
        if i in skip or not isinstance(o, torch.fx.Node) or o not in first:
            continue
        chain, cur, used = [], o, set()
        while (j := first.get(cur, i)) == i:
            if not _is_view(cur) or not isinstance(cur.args[0], torch.fx.Node):
                break
            if not all(_sizes_only(n, used) for n in cur.all_input_nodes if n is not cur.args[0]):
                break
            chain.append(cur)
            cur = cur.args[0]
        if j != i:
            found[i] = (j, chain[::-1])
            sizes |= used
    spans: dict[tuple, int] = {}  # an output's dense span of memory -> the first output (not itself derived) over it
    for i, o in enumerate(outs):
        if i in skip or i in found or (span := _dense_span(o)) is None:
            continue
        if span not in spans:
            spans[span] = i
        else:
            found[i] = (spans[span], [_AsStrided(tuple(o.meta["val"].shape), tuple(o.meta["val"].stride()))])
    if not found:
        return [], None, set()
    for i, (j, chain) in found.items():  # a base that is itself a view: from its own base (chains only go back)
        while j in found:
            j, chain = found[j][0], found[j][1] + chain
        found[i] = (j, chain)
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            env[n] = graph.node_copy(n)
    bases = {j: graph.placeholder(f"output_{j}") for j in dict.fromkeys(j for j, _ in found.values())}
    for n in gm.graph.nodes:
        if n in sizes:
            env[n] = graph.node_copy(n, lambda a: env[a])
    results = []
    for j, chain in found.values():
        v = bases[j]
        for n in chain:
            if isinstance(n, _AsStrided):
                v = graph.call_function(torch.as_strided, (v, n.size, n.stride))
                continue
            rest = torch.fx.node.map_arg((n.args[1:], n.kwargs), lambda a: env[a])
            v = graph.call_function(n.target, (v, *rest[0]), rest[1])
        results.append(v)
    graph.output(tuple(results))
    replay = torch.fx.GraphModule(gm, graph)
    base_ids = list(bases)
    derive = lambda args, outputs: replay.forward(*args, *[outputs[j] for j in base_ids])  # noqa: E731
    return list(found), derive, set(base_ids)


def drop_view_results(
    module, outputs: list[tuple], aliased: list[int], writes=(), derived=()
) -> tuple[list[tuple], list[tuple[int, int]]]:
    """The graph's output sources with the outputs at `aliased` (input_views' indices) as ("view", k) and those at
    `derived` (output_views') as ("output view", k), and
    @main made to return only the results another output or an input write (`writes`: (input, result) pairs)
    still takes, renumbered, with the writes renumbered: what only a replayed view took is dead, and
    tensor-opt removes it."""
    outputs = list(outputs)
    for k, i in enumerate(aliased):
        outputs[i] = ("view", k)
    for k, i in enumerate(derived):
        outputs[i] = ("output view", k)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    ret = main.get_return_op()
    kept = sorted({v for kind, v in outputs if kind == "result"} | {r for _, r in writes})
    if len(kept) == len(ret.operands):
        return outputs, list(writes)
    ret.parent_block().insert_op_before(func.ReturnOp(*[ret.operands[k] for k in kept]), ret)
    ret.detach()
    ret.erase()
    main.update_function_type()
    number = {k: j for j, k in enumerate(kept)}
    return [(kind, number[v]) if kind == "result" else (kind, v) for kind, v in outputs], [
        (i, number[r]) for i, r in writes
    ]
