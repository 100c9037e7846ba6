"""`irc-opt -t triton`: the Triton source of every kernel of a mem-stage module, in module order.

Each kernel is printed as the @triton.jit function the target loads (prelude helpers such as
`_maximumf` come from targets/triton/prelude.py); a kernel the generator cannot emit is printed as a
comment with the reason (the target runs it on the reference evaluator). Then each mm extern's tl.dot
template, which options={"matmul": "dot"} runs, with the epilogue kernel it absorbs. With `archs` (`--arch`), each is
followed by what it needs on those GPUs, compiled ahead of time with the blocks the heuristic launches it with
(aot.py): registers, spilled bytes and shared memory, or the stage that rejects it.
"""

from xdsl.dialects.builtin import ModuleOp

from . import aot
from .matmul import dot_kernel, plan_dots
from .source import kernel_funcs, kernel_source
from .types import Unsupported


def triton_source(module: ModuleOp, archs: tuple[str, ...] = ()) -> str:
    compiled = {k.name: k for k in aot.launchables(module, autotune=False)} if archs else {}

    def resources(name: str) -> str:
        return "".join(_resources(compiled[name], arch) for arch in archs) if name in compiled else ""

    parts = []
    for fn in kernel_funcs(module):
        try:
            src = kernel_source(fn)
        except Unsupported as e:
            parts.append(f"# @{fn.sym_name.data}: not emitted ({e}); runs on the reference evaluator\n")
            continue
        parts.append(f"# @{src.name}: {src.mode}\n{src.kernel}{resources(src.name)}")
    for i, plan in enumerate(plan_dots(module)):
        try:
            dot = dot_kernel(plan, i)
        except Unsupported as e:
            parts.append(f"# mm extern {i}: no tl.dot template ({e})\n")
            continue
        fused = f", epilogue @{plan.epilogue.sym_name.data}" if plan.epilogue is not None else ""
        parts.append(f"# mm extern {i} with matmul=dot: tl.dot template{fused}\n{dot.kernel}{resources(dot.name)}")
    return "\n".join(parts)


def _resources(kernel: aot.Launchable, arch: str) -> str:
    try:
        return f"# {aot.compile_kernel(kernel, arch, kernel.configs[0])}\n"
    except aot.AotFailure as e:
        return f"# {e.summary}\n"  # the kernel's source is right above
