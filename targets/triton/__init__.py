"""The Triton target: mem-stage graphs with every kernel as generated Triton source.

    source.py    one loop.nest kernel -> a @triton.jit function (blocks, masks, pointer arithmetic, reductions)
    ops.py       the op table: arith/math op class -> Triton expression
    types.py     compute and storage dtypes (f16/bf16 in f32, bool as int1)
    affine.py    index maps as index arithmetic; bounds that spare a load its range mask
    prelude.py   the @triton.jit helpers every generated file starts with (core tl only)
    reduce.py    reduction identities, lane-wise combines, lane reductions
    matmul.py    mm and bmm externs (and the pointwise kernel after them) as one tl.dot template
    blocks.py    block sizes by heuristic; triton.autotune configs for max-autotune
    loader.py    source files in the irc cache, imported from there
    launch.py    a kernel ready to launch: its (autotuned) function, arguments flattened, the grid
    runtime.py   TritonRunner: @main through the mem-stage reference walker, launches as Triton kernels
    emit.py      `irc-opt -t triton`: the source of every kernel of a mem-stage module
    aot.py       ahead-of-time compiles for sm_80, sm_90 and gfx942 without the device: failures, registers, spills, shared memory

Without a GPU, kernels run under Triton's interpreter (TRITON_INTERPRET=1, on CPU tensors): the
target sets the variable itself, before any kernel is defined, when torch sees no CUDA device and the
variable is unset. With a GPU the same source runs natively on the tensors' device.
"""

import os


def ensure_interpreter() -> bool:
    """Turn on Triton's interpreter when there is no GPU (and the user has not decided); True when it is on."""
    if "TRITON_INTERPRET" not in os.environ:
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
