"""`irc-opt -t triton`: the Triton source of every kernel of a mem-stage module, in module order.

Each kernel is printed as the @triton.jit function the target loads (prelude helpers such as
`_maximumf` come from targets/triton/prelude.py); a kernel the generator cannot emit is printed as a
comment with the reason (the target runs it on the reference evaluator). Then each mm extern's tl.dot
template, which options={"matmul": "dot"} runs, with the epilogue kernel it absorbs.
"""

from xdsl.dialects.builtin import ModuleOp

from .matmul import dot_kernel, plan_dots
from .source import kernel_funcs, kernel_source
from .types import Unsupported


def triton_source(module: ModuleOp) -> str:
    parts = []
    for fn in kernel_funcs(module):
        try:
            src = kernel_source(fn)
        except Unsupported as e:
            parts.append(f"# @{fn.sym_name.data}: not emitted ({e}); runs on the reference evaluator\n")
            continue
        parts.append(f"# @{src.name}: {src.mode}\n{src.kernel}")
    for i, plan in enumerate(plan_dots(module)):
        try:
            dot = dot_kernel(plan, i)
        except Unsupported as e:
            parts.append(f"# mm extern {i}: no tl.dot template ({e})\n")
            continue
        fused = f", epilogue @{plan.epilogue.sym_name.data}" if plan.epilogue is not None else ""
        parts.append(f"# mm extern {i} with matmul=dot: tl.dot template{fused}\n{dot.kernel}")
    return "\n".join(parts)
