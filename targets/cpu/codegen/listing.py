"""`irc-opt -t llvm`: the LLVM IR the CPU target generates for a mem-stage module.

Kernels are specialised per launch to the layouts of @main's arguments, which a module alone does not
fix (the backend knows them from the example inputs). The listing assumes contiguous arguments:
row-major strides, each dynamic size a runtime value of its own. Kernels the emitter cannot take are
named in a trailing comment with the reason, as the compile report names them. For a CPU of another
architecture (IRC_CPU=aarch64) the kernels are emitted for its triple and not compiled.
"""

from llvmlite import ir
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, TensorType

from irc.ir.types import torch_dtype
from irc.targets.args import ArgSpec

from ..runtime import jit
from ..runtime.compiled import Compiled


def contiguous_argspecs(module: ModuleOp, entry: str = "main") -> list[ArgSpec]:
    main = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == entry)
    specs = []
    for i, t in enumerate(main.function_type.inputs.data):
        name = f"arg{i}"
        if isinstance(t, MemRefType | TensorType):
            sizes = tuple(d if d >= 0 else f"{name}_size{k}" for k, d in enumerate(t.get_shape()))
            strides, step = [], 1
            for k in reversed(range(len(sizes))):
                strides.append(step)
                step = (
                    step * sizes[k] if isinstance(step, int) and isinstance(sizes[k], int) else f"{name}_stride{k - 1}"
                )
            specs.append(ArgSpec(name, "tensor", torch_dtype(t.get_element_type()), sizes, tuple(reversed(strides))))
        elif isinstance(t, IndexType):
            specs.append(ArgSpec(name, "index", value=name))
        else:
            specs.append(ArgSpec(name, "other"))
    return specs


def llvm_ir(module: ModuleOp) -> str:
    compiled = Compiled(module, contiguous_argspecs(module))
    if jit.host().runs_here:
        compiled.build(cache=False)
        text, fallbacks = compiled.llvm_ir, compiled.fallbacks
    else:
        mod = ir.Module("irc_graph")
        mod.triple = jit.host().triple
        emitted = compiled.emit_kernels(mod, compiled.built_variant)
        text = str(mod)
        fallbacks = [
            (f"kernel {ln.step.op.callee.root_reference.data}", why)
            for ln, (fname, why) in zip(compiled.launches, emitted, strict=True)
            if fname is None
        ]
    notes = "".join(f"; {what} runs on the reference evaluator: {why}\n" for what, why in fallbacks)
    return text + notes
