"""Outputs that are views of inputs, made by replaying their view ops on the real inputs.

AOT autograd rebuilds an output that aliases a graph input from the compiled graph's output: with
static sizes it replays the views itself, but with symbolic ones it calls
`input.as_strided(out.size(), out.stride(), out.storage_offset())`, so the compiled output must be a
view into the input's own storage with eager's layout. A copy (or a buffer of irc's) has storage
offset 0 and the rebuilt view reads the wrong elements. So such an output is not taken from the
compiled program: its chain of view ops (metadata only, no data moves) runs eagerly on the inputs, and
the program does not return it (`drop_view_results`), so it computes no copy of it either: a training
forward saves its input and each transposed weight for the backward, and irc copied them every step
(a 1024x1024 transpose per layer of the MLP).
"""

import operator
from collections.abc import Callable

import torch
import torch.fx
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._pytree import tree_flatten
from xdsl.dialects import func


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


def input_views(gm: torch.fx.GraphModule) -> tuple[list[int], Callable[[list], tuple] | None]:
    """(indices of the outputs that are views of an input, a function of the graph's inputs returning them)."""
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
        return [], None
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder" or n in keep:
            env[n] = graph.node_copy(n, lambda a: env[a])
    graph.output(tuple(env[n] for n in nodes))
    replay = torch.fx.GraphModule(gm, graph)
    return indices, lambda args: replay(*args)


def drop_view_results(module, outputs: list[tuple], aliased: list[int], writes=()) -> tuple[list[tuple], list[tuple[int, int]]]:
    """The graph's output sources with the outputs at `aliased` (input_views' indices) as ("view", k), and
    @main made to return only the results another output or an input write (`writes`: (input, result) pairs)
    still takes, renumbered, with the writes renumbered: what only a replayed view took is dead, and
    tensor-opt removes it."""
    outputs = list(outputs)
    for k, i in enumerate(aliased):
        outputs[i] = ("view", k)
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
    return [(kind, number[v]) if kind == "result" else (kind, v) for kind, v in outputs], [(i, number[r]) for i, r in writes]
