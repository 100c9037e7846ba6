"""`irc-opt -t/--emit TARGET`: the hook through which targets print their code for a mem-stage module.

EMITTERS maps a target name to a function from the mem-stage module to the target's source text
(LLVM IR, Triton Python), or to None while the target does not exist. A target registers by
putting its function here (tools may import targets; targets never import tools):

    EMITTERS["llvm"] = lambda module: irc.targets.cpu.codegen.listing.llvm_ir(module)

`mlir`, the default, prints the IR itself and is not listed here. `--arch` (triton only) also compiles each kernel
ahead of time for those GPU architectures and prints its registers, spills and shared memory.
"""

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

Emitter = Callable[[ModuleOp], str]


def _llvm(module: ModuleOp) -> str:
    from irc.targets.cpu.codegen.listing import (
        llvm_ir,  # llvmlite loads only when asked for
    )

    return _no_code(module, "llvm") or llvm_ir(module)


EMITTERS: dict[str, Emitter | None] = {
    "llvm": _llvm,  # targets/cpu: the LLVM IR of every kernel, specialised to contiguous arguments
    "triton": None,  # targets/triton: Triton source per kernel
}


def _triton(module: ModuleOp, archs: tuple[str, ...] = ()) -> str:
    from irc.targets.triton.emit import triton_source

    return _no_code(module, "triton") or triton_source(module, archs)


EMITTERS["triton"] = _triton

EMIT_STAGE = "mem"  # the stage every target's code is generated from


class TargetUnavailable(Exception):
    pass


def _no_code(module: ModuleOp, target: str) -> str | None:
    """The listing of a module without a @main to generate from (none, or one only declared): a comment saying so."""
    main = next((op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main"), None)
    if main is not None and getattr(main, "body", None) is not None and main.body.blocks:
        return None
    why = "has no @main" if main is None else "declares @main without a body"
    return f"{'#' if target == 'triton' else ';'} the module {why}: no kernels to generate\n"


def emitter(name: str, arch: str | None = None) -> Emitter:
    """The emitter of target `name`; `arch` (-t triton only): comma-separated GPU architectures to compile for."""
    if arch is not None and name != "triton":
        raise TargetUnavailable(f"--arch compiles Triton kernels for a GPU: it needs -t triton, not -t {name}")
    fn = EMITTERS.get(name)
    if fn is None:
        raise TargetUnavailable(f"target '{name}' is not available yet (irc-opt can print: mlir)")
    if arch is None:
        return fn
    from irc.targets.triton.aot import ARCHS

    archs = tuple(arch.split(","))
    if unknown := [a for a in archs if a not in ARCHS]:
        raise TargetUnavailable(f"unknown --arch {', '.join(unknown)}; valid: {', '.join(ARCHS)}")
    return lambda module: _triton(module, archs)
