"""The whole compiler on one screen: the named stages and the passes between them.

    fx --frontend--> tensor --TENSOR_OPT--> tensor-opt --LOOP--> loop --MEM--> mem

`lower(module)` takes a tensor-opt module through the loop and mem stages in place and returns
what the compile report needs; targets/reference/memory.MemRunner runs the result.
"""

from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from irc.dialects import ALL_DIALECTS
from irc.ir import PassTiming, make_context, run_passes

from .bufferize import BufferizePass
from .fold_batch_norm import FoldBatchNormPass, fold_batch_norm
from .fold_constants import ConstantArgs, FoldConstantsPass, fold_constants
from .fuse_attention import FuseAttentionPass
from .fusion.fuse import FuseLoopsPass
from .layout_rules import FoldPermutesPass
from .matmul_loops import MatmulToLoopsPass
from .output_layout import OutputLayoutPass
from .plan_buffers import PlanBuffersPass
from .select_layout import SelectLayoutPass
from .simplify_loop import SimplifyLoopPass
from .simplify_tensor import SimplifyTensorPass
from .tensor_to_loop import TensorToLoopPass

# stage name -> passes that produce it from the previous stage (`fx` and `tensor` come from the frontend)
TENSOR_OPT = (FuseAttentionPass(), SimplifyTensorPass(), SelectLayoutPass(), FoldPermutesPass(), CommonSubexpressionElimination(), DeadCodeElimination())
LOOP = (TensorToLoopPass(), SimplifyLoopPass(), FuseLoopsPass(), SimplifyLoopPass(), OutputLayoutPass())
MEM = (BufferizePass(), PlanBuffersPass())

# inference graphs with frozen parameters first run these (freeze() below, given the parameters' values)
FREEZE = (FoldBatchNormPass(), FoldConstantsPass())

# passes an option adds to a stage (loop_passes below); irc-opt can run them like any other
OPTIONAL = (MatmulToLoopsPass(),)

STAGES = {"tensor-opt": TENSOR_OPT, "loop": LOOP, "mem": MEM}
STAGE_ORDER = ("fx", "tensor", "tensor-opt", "loop", "mem")


def freeze(module: ModuleOp, constants: ConstantArgs) -> None:
    """FREEZE with the frozen arguments' values: BatchNorm folded into the layers before it, then constants evaluated."""
    fold_batch_norm(module, constants)
    fold_constants(module, constants)


def tensor_opt(passes=TENSOR_OPT, *, attention: bool = True) -> tuple:
    """The tensor-opt passes for a compile's options: options={"attention": False} keeps attention unfused."""
    return tuple(p for p in passes if attention or not isinstance(p, FuseAttentionPass))


def with_layout(passes: tuple, layout: str = "auto", conv_timer=None) -> tuple:
    """`passes` with select-layout set for one compile: options={"layout": ...} and the target's convolution timer."""
    return tuple(SelectLayoutPass(layout, conv_timer) if isinstance(p, SelectLayoutPass) else p for p in passes)


def loop_passes(matmul: str = "extern") -> tuple:
    """The loop-stage passes for a compile's options: options={"matmul": "loops"} generates the matmuls first."""
    return (MatmulToLoopsPass(), *LOOP) if matmul == "loops" else LOOP


@dataclass
class Lowered:
    """What lowering a tensor-opt module to the mem stage did, for the compile report."""

    kernels: int = 0  # loop.nest ops after fusion (each one kernel launch)
    externs: list[str] = field(default_factory=list)  # tn ops that run as torch kernels
    views: int = 0  # loop.view and tn.reshape ops (views handed to externs, no copy)
    refusals: list[str] = field(default_factory=list)  # fusion refusals still standing, with reasons
    arena_bytes: int = 0  # planned peak of the intermediates
    intermediate_bytes: int = 0  # the sum of every intermediate's size
    in_place: int = 0
    launches: int = 0  # mem.launch + mem.extern in @main's sequence

    def summary(self) -> str:
        return (
            f"{self.kernels} fused kernels, {len(self.externs)} externs, {self.views} views; planned peak "
            f"{self.arena_bytes} bytes for {self.intermediate_bytes} bytes of intermediates ({self.in_place} in place)"
        )


def lower(module: ModuleOp, *, verify: bool = True, dump=None, timing: PassTiming | None = None, matmul: str = "extern") -> Lowered:
    """tensor-opt -> loop -> mem, in place. `dump(stage, module)` sees the module after each stage;
    matmul="loops" generates the matrix products (matmul-to-loops) instead of calling the library."""
    from irc.dialects import loop, memory
    from irc.dialects import tensor as tn

    from .fusion.fuse import refusals
    from .plan_buffers import plan_module

    ctx = make_context(ALL_DIALECTS)
    run_passes(ctx, module, loop_passes(matmul), verify=verify, timing=timing)
    out = Lowered()
    for op in module.walk():
        if isinstance(op, loop.NestOp):
            out.kernels += 1
        elif isinstance(op, loop.ViewOp | tn.ReshapeOp):  # a reshape left at this stage aliases its contiguous source
            out.views += 1
        elif op.name.startswith("tn.") and not isinstance(op, tn.DimOp):
            out.externs.append(op.name)
    out.refusals = refusals(module)
    if dump is not None:
        dump("loop", module)
    run_passes(ctx, module, MEM[:1], verify=verify, timing=timing)
    plan = plan_module(module)
    if verify:
        module.verify()
    out.arena_bytes, out.intermediate_bytes, out.in_place = plan.arena_bytes, plan.intermediate_bytes, plan.in_place
    out.launches = sum(isinstance(op, memory.LaunchOp | memory.ExternOp) for op in module.walk())
    if dump is not None:
        dump("mem", module)
    return out
