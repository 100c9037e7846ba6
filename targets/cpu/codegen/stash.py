"""Values a reduction's pass leaves in an output for the kernel's later passes (KernelEmitter.region).

A later pass (another reduction's, or the last one, which writes the full outputs) that needs the value an earlier
reduction reduces would compute that value again; where it costs math functions (softmax's exp(x - max): exp / sum)
or gathers (layer_norm of a sum of embedding rows), the earlier reduction's pass stores it in a full output's own
element and every later pass reads it back: one exponential (or gather) per element, however many passes follow
(softmax then layer_norm over the same rows: five passes, one exp). The last pass overwrites the element with the
output's value. Only where the output holds the value's own type, so that reading it back gives the same bits (a
bf16 output of an f32 computation would round it).
"""

from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import SSAValue

from irc.dialects import loop
from irc.dialects.math_cost import costly_math


def stashes(
    nest: loop.NestOp, reduces: list[loop.ReduceOp], yields: list[SSAValue], opset: set, later: list[int]
) -> dict[int, tuple[int, SSAValue]]:
    """Reduction k -> (output i, the value k reduces): the value stored in output i (one of `later`, written in the
    last pass) by k's pass, for the passes after it. The earliest such value first: it spares the most passes."""
    out: dict[int, tuple[int, SSAValue]] = {}
    free = list(later)
    needs_after: list[set] = []  # reversed: the ops the passes after each reduction compute, last reduction first
    acc = set().union(*(cone(yields[i], opset) for i in later))
    for r in reversed(reduces):
        needs_after.append(set(acc))
        acc |= cone(r.input, opset)
    needs_after.reverse()
    for k, r in enumerate(reduces):
        v = r.input
        if v.owner not in needs_after[k] or not isinstance(v.type, Float32Type | Float64Type):
            continue
        read = {w for _, w in out.values()}  # values earlier passes stashed: read back, they cost nothing
        if not any(costly(op) for op in cone(v, opset, read)):
            continue
        i = next((i for i in free if nest.outs[i].type.get_element_type() == v.type), None)
        if i is not None:
            out[k] = (i, v)
            free.remove(i)
    return out


def costly(op) -> bool:
    """Worth computing once: a math function, or a gather (a load at an index the body loads: an embedding's row,
    clamped and masked, from wherever the index points)."""
    return costly_math(op) or isinstance(op, loop.LoadOp) and bool(op.indices)


def cone(v: SSAValue, opset: set, read: set = frozenset()) -> set:
    """The body's ops that compute v at a point (not through a reduction's result, nor through a `read` value)."""
    seen, stack = set(), [v]
    while stack:
        w = stack.pop()
        if w in read:
            continue
        op = w.owner
        if op in opset and op not in seen and not isinstance(op, loop.ReduceOp):
            seen.add(op)
            stack.extend(op.operands)
    return seen
