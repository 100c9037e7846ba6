"""Reference execution of the mem stage: the launch sequence on torch buffers, through xDSL's interpreter.

mem.arena is one uint8 tensor (kept across calls), mem.slot a typed view of it at its byte
offset, mem.alloc a fresh tensor, mem.view a strided view, mem.launch the kernel's nest
evaluated by the torch-vectorised evaluator into its out buffers, mem.extern its region run by
the tn reference semantics and copied into its outs. MemRunner is what the backend calls until
the CPU target lands: `MemRunner(module)(inputs) -> outputs`.
"""

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, ReturnedValues, impl, impl_terminator, register_impls
from xdsl.interpreters.func import FuncFunctions

from irc.dialects import loop, memory
from irc.ir.types import torch_dtype

from .loop import LoopFunctions, run_nest, view_of
from .tensor import IndexFunctions, TensorFunctions


def memref_shape(t: MemRefType, sizes) -> list[int]:
    it = iter(int(s) for s in sizes)
    return [next(it) if d == loop.DYN else d for d in t.get_shape()]


@register_impls
class MemFunctions(InterpreterFunctions):
    def __init__(self, module: ModuleOp):
        super().__init__()
        self.kernels = {
            op.sym_name.data: next(o for o in op.body.block.ops if isinstance(o, loop.NestOp))
            for op in module.body.block.ops
            if isinstance(op, func.FuncOp)
            and op.body.blocks
            and any(isinstance(o, loop.NestOp) and o.outs for o in op.body.block.ops)
        }
        self.arenas: dict[memory.ArenaOp, torch.Tensor] = {}

    @impl(memory.ArenaOp)
    def run_arena(self, interpreter: Interpreter, op: memory.ArenaOp, args):
        if op not in self.arenas:
            self.arenas[op] = torch.empty(op.result.type.get_shape()[0], dtype=torch.uint8)
        return (self.arenas[op],)

    @impl(memory.SlotOp)
    def run_slot(self, interpreter: Interpreter, op: memory.SlotOp, args):
        t = op.result.type
        dtype = torch_dtype(t.get_element_type())
        n = memory.nbytes_of(t)
        start = op.offset.value.data
        return (args[0][start : start + n].view(dtype).view(list(t.get_shape())),)

    @impl(memory.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memory.AllocOp, args):
        t = op.result.type
        return (torch.empty(memref_shape(t, args), dtype=torch_dtype(t.get_element_type())),)

    @impl(memory.DimOp)
    def run_dim(self, interpreter: Interpreter, op: memory.DimOp, args):
        return (args[0].shape[op.dim.value.data],)

    @impl(memory.ViewOp)
    def run_view(self, interpreter: Interpreter, op: memory.ViewOp, args):
        return (view_of(op, args[0], [int(a) for a in args[1:]]),)

    @impl(memory.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: memory.ReshapeOp, args):
        return (args[0].view(memref_shape(op.result.type, args[1:])),)

    @impl(memory.LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: memory.LaunchOp, args):
        nest = self.kernels[op.callee.root_reference.data]
        params = nest.parent_block().args
        n_in, n_out = len(op.ins), len(op.outs)
        env = dict(zip(params, args))
        syms = [int(a) for a in args[n_in + n_out :]]
        run_nest(nest, env.__getitem__, syms, list(args[n_in : n_in + n_out]))
        return ()

    @impl(memory.ExternOp)
    def run_extern(self, interpreter: Interpreter, op: memory.ExternOp, args):
        ins, outs = args[: len(op.ins)], args[len(op.ins) :]
        values = interpreter.run_ssacfg_region(op.body, tuple(ins), "mem.extern")
        for buf, v in zip(outs, values):
            buf.copy_(v)
        return tuple(v.contiguous() for v in values[len(outs) :])

    @impl_terminator(memory.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: memory.YieldOp, args):
        return ReturnedValues(args), ()


def make_mem_interpreter(module: ModuleOp) -> Interpreter:
    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), IndexFunctions(), TensorFunctions(), LoopFunctions(), MemFunctions(module)):
        interpreter.register_implementations(functions)
    return interpreter


class MemRunner:
    """Runs a mem-stage module's @main on torch tensors (inputs in, fresh outputs back); the arena persists across calls."""

    def __init__(self, module: ModuleOp, entry: str = "main"):
        self.entry = entry
        self.interpreter = make_mem_interpreter(module)

    def __call__(self, args) -> tuple:
        return self.interpreter.call_op(self.entry, tuple(args))


def run_mem_module(module: ModuleOp, args, entry: str = "main") -> tuple:
    return MemRunner(module, entry)(args)
