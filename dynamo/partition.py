"""What a training forward saves for its backward: AOT autograd's min-cut choice (as inductor's).

AOT autograd traces forward and backward as one joint graph and a partitioner cuts it in two. The default cut
saves every forward value the backward reads; the min-cut saves the smallest set of values the backward can
recompute the rest from: a pointwise value (a step of a written-out GELU, a scaled input) is computed again in the
backward's fused kernels from one already saved instead of being written by the forward, kept alive between the
two and read back. Matrix products, convolutions, reductions and random draws are never recomputed.

Three changes to AOT's min-cut, two of them for what views cost in irc:
- A view the backward reads of a value the forward saves is saved too, as it is (the default cut's choice). It
  costs no memory, and recomputing it is not free in irc: the backward reads its inputs in any strides, so
  merging the dims of a strided input (attention's heads-last output back to rows) takes a copy kernel.
- A transposed view the min-cut saves for the backward alone is saved untransposed, the backward transposing it
  again: a forward output that is a view of no other output gets its own buffer, and a transposed one is a
  transposing copy (an activation transposed for a matrix product), where the backward's matrix products read a
  transposed operand for free. One the forward reads too (attention's heads-first q) is computed anyway.
- AOT's common-subexpression pass is off: irc's tensor-opt stage runs CSE over each graph it compiles, and AOT's
  pass imports inductor's pattern matcher, a large share of the first train step in a process.

The min-cut may also save an input the forward mutates (a buffer the module updates in place, such as a QAT
observer's statistics, read again by the backward to recompute from). The forward writes the new value into that
tensor (the program itself, or AOT's runtime after it), so the backward would read the new value: eager autograd
refuses such a tensor (its version changed), and irc, which writes inputs back keeping their version counters,
would compute wrong gradients. keep_saved_inputs makes such a forward save a copy of the input as it was.
"""

from unittest import mock

import torch.fx
from torch._functorch import config as functorch_config
from torch._functorch import partitioners


def recompute_partition(joint_module, joint_inputs, **kwargs):
    """partition_fn for aot_autograd: the min-cut partition of the joint graph, saving the views described above."""
    choose = partitioners.choose_saved_values_set

    def with_views(joint_graph, node_info, *args, **kw):
        return saved_views(choose(joint_graph, node_info, *args, **kw), node_info.is_required_fw)

    with functorch_config.patch(cse=False), mock.patch.object(partitioners, "choose_saved_values_set", with_views):
        return partitioners.min_cut_rematerialization_partition(joint_module, joint_inputs, **kwargs)


def saved_mutated_inputs(gm: torch.fx.GraphModule) -> list[tuple[int, int]]:
    """(output, input) of a training forward (AOT's metadata in the tracing context): each output saved for the
    backward that is an input the forward mutates."""
    from torch._guards import TracingContext

    md = getattr(TracingContext.try_get(), "fw_metadata", None)
    if md is None:
        return []
    tokens = len(md.tokens)
    inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    mutated = {inputs[tokens + i]: tokens + i for i, info in enumerate(md.input_info) if info.mutates_data}
    results = gm.graph.output_node().args[0]
    return [(k, mutated[r]) for k, r in enumerate(results) if k >= tokens + md.num_forward_returns and r in mutated]


def keep_saved_inputs(forward, pairs: list[tuple[int, int]]):
    """A boxed forward whose output k of each (k, i) in `pairs` is a copy of input i taken before the call."""
    boxed = getattr(forward, "_boxed_call", False)

    def run(args):
        before = {i: args[i].clone() for _, i in pairs}  # the call may write the inputs, and clear `args`
        outs = list(forward(args) if boxed else forward(*args))
        for k, i in pairs:
            outs[k] = before[i]
        return outs

    run._boxed_call = True
    return run


_TRANSPOSES = {torch.ops.aten.permute.default, torch.ops.aten.t.default, torch.ops.aten.transpose.int}


def saved_views(saved: list[torch.fx.Node], in_forward) -> list[torch.fx.Node]:
    """`saved`, each transposed view only the backward reads replaced by what it transposes, and after it each
    forward view but a transpose (through other views) of a saved value that a backward node reads."""
    out, seen = [], set()
    for n in saved:
        while isinstance(n, torch.fx.Node) and n.target in _TRANSPOSES and not any(in_forward(u) for u in n.users):
            n = n.args[0]
        if n not in seen:
            seen.add(n)
            out.append(n)
    stack = [n for n in out if isinstance(n, torch.fx.Node)]
    while stack:
        for user in stack.pop().users:
            if user in seen or not in_forward(user) or not getattr(user.target, "is_view", False):
                continue
            seen.add(user)
            stack.append(user)
            if user.target not in _TRANSPOSES and any(not in_forward(u) for u in user.users):
                out.append(user)
    return out
