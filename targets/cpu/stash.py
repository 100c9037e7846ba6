"""Values a reduction's pass leaves in an output for the kernel's last pass (KernelEmitter.region).

A full output written in the last pass over the reduction dims, computed from the value a reduction reduces, would
compute that value a second time; where it costs math functions (softmax's exp(x - max): exp / sum), the reduction's
pass stores it in the output's own element and the last pass reads it back: one exponential per element, not two.
Only where the output holds the value's own type, so that reading it back gives the same bits (a bf16 output of an
f32 computation would round it).
"""

from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import SSAValue

from irc.dialects import loop
from irc.dialects.math_cost import costly_math


def stashes(nest: loop.NestOp, reduces: list[loop.ReduceOp], yields: list[SSAValue], opset: set,
            later: list[int]) -> dict[int, tuple[int, SSAValue]]:  # fmt: skip
    """Reduction k -> (output i, the value k reduces) for the outputs `later` (written in the last pass)."""
    out: dict[int, tuple[int, SSAValue]] = {}
    for i in later:
        needs = cone(yields[i], opset)
        elem = nest.outs[i].type.get_element_type()
        for k in reversed(range(len(reduces))):
            v = reduces[k].input
            if (v.owner in needs and k not in out and elem == v.type and isinstance(elem, Float32Type | Float64Type)
                    and any(costly_math(op) for op in cone(v, opset))):
                out[k] = (i, v)
                break
    return out


def cone(v: SSAValue, opset: set) -> set:
    """The body's ops that compute v at a point (not through a reduction's result)."""
    seen, stack = set(), [v]
    while stack:
        op = stack.pop().owner
        if op in opset and op not in seen and not isinstance(op, loop.ReduceOp):
            seen.add(op)
            stack.extend(op.operands)
    return seen
