"""TritonRunner: a mem-stage @main run with its kernels as Triton launches.

@main itself is walked by the mem-stage reference (targets/reference/memory.py), whose interpreter
already gives every op of the launch sequence its meaning on torch tensors: the arena as one byte
tensor with typed slots, allocations, strided views, externs through torch. Here `mem.launch` calls
the kernel's Triton function instead. This is the simplest runtime that works, and it keeps one walker
for both targets; its per-op Python cost is small next to a Triton launch (and next to the interpreter
without a GPU). The CPU runtime's planner (targets/cpu/runtime/graph.py) is tied to its frame of cells and
JITed kernels and would buy little here.

With options={"matmul": "dot"} the mm externs run the tl.dot template (matmul.py); an mm with a fused
epilogue is deferred to the epilogue's launch, which runs the template in its place.

Buffers live on the device of the graph's first tensor argument. A kernel the generator cannot emit,
or whose Triton function fails on its first launch, runs on the reference loop evaluator instead; each
is listed in `fallbacks` as (kernel, reason), which the compile report shows. With `archs` (keys of aot.ARCHS)
every kernel is also compiled ahead of time for those GPUs, and `resources` holds a line per kernel and GPU for
the report (registers, spills, shared memory, or why it does not compile).

While torch.profiler records (read once per call), each launch runs inside a profiler event named by its
kernel ("irc::kernel0"), and each extern by its op ("irc::tn.mm", "irc::tn.mm (tl.dot)").
"""

import logging

import torch
import torch.autograd.profiler as torch_profiler  # _is_profiler_enabled: True while a torch.profiler records
from torch._C._profiler import _RecordFunctionFast
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, impl, register_impls
from xdsl.interpreters.func import FuncFunctions

from irc.dialects import memory
from irc.ir.types import torch_dtype
from irc.targets.reference.loop import LoopFunctions, extents, run_nest
from irc.targets.reference.memory import MemFunctions, memref_shape
from irc.targets.reference.tensor import IndexFunctions, TensorFunctions

from . import aot
from .launch import DotLauncher, TritonKernel, device_of, overlaps
from .matmul import dot_kernel, plan_dots
from .source import kernel_funcs, kernel_source
from .types import Unsupported

log = logging.getLogger("irc.fallbacks")  # irc.log topic


@register_impls
class TritonMemFunctions(MemFunctions):
    def __init__(self, module: ModuleOp, kernels: dict, fallbacks: list, dots: dict):
        super().__init__(module)
        self.triton = kernels  # name -> TritonKernel
        self.fallbacks = fallbacks
        self.dots = dots  # mm extern -> (DotLauncher, DotPlan)
        self.pending: dict = {}  # epilogue launch -> (a, b, product argument) of the mm it fuses
        self.device = torch.device("cpu")
        self.arena_of: dict = {}
        self.profiling = False  # a torch.profiler records this call: launches and externs as named events

    @impl(memory.ArenaOp)
    def run_arena(self, interpreter: Interpreter, op: memory.ArenaOp, args):
        key = (op, self.device)
        if key not in self.arena_of:
            self.arena_of[key] = torch.empty(op.result.type.get_shape()[0], dtype=torch.uint8, device=self.device)
        return (self.arena_of[key],)

    @impl(memory.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memory.AllocOp, args):
        t = op.result.type
        return (torch.empty(memref_shape(t, args), dtype=torch_dtype(t.get_element_type()), device=self.device),)

    @impl(memory.ExternOp)
    def run_extern(self, interpreter: Interpreter, op: memory.ExternOp, args):
        if not self.profiling:
            return self.extern(interpreter, op, args)
        inner = ", ".join(o.name for o in list(op.body.block.ops)[:-1])
        with _RecordFunctionFast(f"irc::{inner}{' (tl.dot)' if op in self.dots else ''}"):
            return self.extern(interpreter, op, args)

    def extern(self, interpreter: Interpreter, op: memory.ExternOp, args):
        if op not in self.dots:
            return super().run_extern(interpreter, op, args).values  # @impl wraps the values in an OpImplResult
        launcher, plan = self.dots[op]
        a, b = args[0], args[1]
        t = (op.outs[0] if op.outs else op.res[0]).type
        dtype = torch_dtype(t.get_element_type())
        shape = [*a.shape[:-1], b.shape[-1]]
        if plan.launch is not None:  # the epilogue launch computes it; a placeholder of the right shape till then
            self.pending[plan.launch] = (a, b)
            return () if op.outs else (torch.empty(1, dtype=dtype, device=a.device).expand(shape),)
        c = args[2] if op.outs else torch.empty(shape, dtype=dtype, device=a.device)
        if not self.try_dot(op, launcher, a, b, c=c):
            c.copy_(torch.matmul(a, b))
        return () if op.outs else (c,)

    def try_dot(self, extern, launcher, a, b, **kw) -> bool:
        try:
            launcher(a, b, **kw)
            return True
        except Exception as e:  # noqa: BLE001 - Triton rejected the template: torch's mm from now on
            log.warning("irc: triton mm template failed (%s); torch's mm runs instead", e)
            self.fallbacks.append(
                ("mm template", f"triton: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            )
            self.dots.pop(extern, None)
            return False

    @impl(memory.LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: memory.LaunchOp, args):
        if not self.profiling:
            return self.launch(op, args)
        with _RecordFunctionFast(f"irc::{op.callee.root_reference.data}"):
            return self.launch(op, args)

    def launch(self, op: memory.LaunchOp, args):
        name = op.callee.root_reference.data
        n_in, n_out = len(op.ins), len(op.outs)
        if op in self.pending:
            args = self.fused_launch(op, list(args))
            if args is None:
                return ()
        syms = [int(a) for a in args[n_in + n_out :]]
        kernel = self.triton.get(name)
        if kernel is not None:
            try:
                kernel(list(args), syms)
                return ()
            except Exception as e:  # noqa: BLE001 - a kernel Triton rejects runs on the reference from now on
                log.warning("irc: triton kernel @%s failed (%s); it runs on the reference evaluator", name, e)
                self.fallbacks.append(
                    (f"kernel @{name}", f"triton: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                )
                del self.triton[name]
        nest = self.kernels[name]
        env = dict(zip(nest.parent_block().args, args))
        run_nest(nest, env.__getitem__, syms, list(args[n_in : n_in + n_out]))
        return ()

    def fused_launch(self, op: memory.LaunchOp, args: list):
        """Run the mm template with this launch as its epilogue (None: done), or the args with the product
        computed for a launch of its own (the space is not the product's, or an output overlaps an operand)."""
        a, b = self.pending.pop(op)
        extern, (launcher, plan) = next((e, v) for e, v in self.dots.items() if v[1].launch is op)
        n_in, n_out = len(op.ins), len(op.outs)
        nest = self.kernels[op.callee.root_reference.data]
        syms = [int(x) for x in args[n_in + n_out :]]
        outs = args[n_in : n_in + n_out]
        fits = extents(nest, syms) == [*a.shape[:-1], b.shape[-1]] and not any(
            overlaps(o, x) for o in outs for x in (a, b)
        )
        if fits and self.try_dot(extern, launcher, a, b, epilogue=args):
            return None
        args[plan.operand] = torch.matmul(a, b)
        return args


class TritonRunner:
    """`TritonRunner(module)(inputs) -> outputs` for a mem-stage module; the arena persists across calls."""

    def __init__(
        self,
        module: ModuleOp,
        *,
        autotune: bool = False,
        matmul: str = "extern",
        fallbacks: list | None = None,
        entry: str = "main",
        archs: tuple[str, ...] = (),
    ):
        self.entry = entry
        self.fallbacks = fallbacks if fallbacks is not None else []
        kernels: dict[str, TritonKernel] = {}
        dots: dict = {}
        if matmul == "dot":
            for i, plan in enumerate(plan_dots(module, entry)):
                try:
                    dots[plan.extern] = (DotLauncher(dot_kernel(plan, i), autotune=autotune), plan)
                except Unsupported as e:
                    self.fallbacks.append((f"mm extern {i}", f"no tl.dot template: {e}"))
        for fn in kernel_funcs(module):
            name = fn.sym_name.data
            try:
                src = kernel_source(fn)
            except Unsupported as e:
                self.fallbacks.append((f"kernel @{name}", str(e)))
                continue
            nest = next(o for o in fn.body.block.ops if hasattr(o, "outs") and o.outs)
            kernels[name] = TritonKernel(src, nest, autotune=autotune)
        self.kernels = len(kernels) + len(dots)
        self.resources = aot.summary(aot.launchables(module, autotune, matmul == "dot"), archs) if archs else []
        self.functions = TritonMemFunctions(module, kernels, self.fallbacks, dots)
        self.interpreter = Interpreter(module)
        for functions in (FuncFunctions(), IndexFunctions(), TensorFunctions(), LoopFunctions(), self.functions):
            self.interpreter.register_implementations(functions)

    def __call__(self, args) -> tuple:
        self.functions.device = device_of(args)
        self.functions.profiling = torch_profiler._is_profiler_enabled
        return self.interpreter.call_op(self.entry, tuple(args))
