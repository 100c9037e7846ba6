"""Ahead-of-time compiles of the generated kernels for GPUs that are not here: sm_80 and sm_90 (cubin), gfx942 (hsaco).

Triton compiles for a target without its device (`triton.compile(ASTSource(...), target=GPUTarget(...))`; ptxas,
cuobjdump and the AMD code generator ship inside the wheel). The interpreter runs kernels on the CPU but never lowers
them, so what only the real compiler checks -- block shapes that are not powers of two, tl.dot operand types, pointer
types, shared memory over a device's limit, register spills -- shows up only here. Each kernel is compiled with every
configuration it may be launched with natively: the heuristic's blocks at its sizes (dynamic sizes taken as large) and
max-autotune's candidates. Sizes and strides are compiled as i64 (what the launcher passes for large tensors; the JIT
specialises small ones to i32 and 1 to a constant, which only removes work).

A compile yields the kernel's resources from the binary: registers per thread, bytes per thread in local (NVIDIA) or
scratch (AMD) memory -- spilled registers --, shared memory (LDS) per program, warps. `Resources.problems` says when a
kernel spills or needs more shared memory than the device has; a compile that fails raises AotFailure with the kernel's
source and the stage that rejected it.
"""

import contextlib
import importlib.util
import io
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir.affine import AffineConstantExpr

from irc.dialects import loop

from . import blocks
from .loader import load_source
from .matmul import dot_kernel, plan_dots
from .source import kernel_funcs, kernel_source
from .types import Unsupported

LARGE = 1 << 20  # the size a dynamic extent is taken at: the largest blocks the heuristic picks


@dataclass(frozen=True)
class Arch:
    backend: str  # "cuda" | "hip"
    arch: int | str  # compute capability or gfx name
    warp_size: int
    shared_limit: int  # the most shared memory (LDS) one program may use, in bytes


ARCHS = {
    "sm_80": Arch("cuda", 80, 32, 166912),  # A100: 163 KiB per block (opt-in)
    "sm_90": Arch("cuda", 90, 32, 232448),  # H100: 227 KiB per block (opt-in)
    "gfx942": Arch("hip", "gfx942", 64, 65536),  # MI300: 64 KiB of LDS per workgroup
}


@dataclass
class Launchable:
    """One generated kernel and the configurations ({block size: value, "num_warps": n}) it may be launched with."""

    name: str
    kernel: str  # the function alone (for messages)
    text: str  # the whole file: prelude and kernel
    arg_types: dict[str, str]
    configs: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Resources:
    kernel: str
    arch: str
    config: tuple  # ((name, value), ...): the block sizes and num_warps compiled
    registers: int  # per thread
    spill_bytes: int  # per thread, in local/scratch memory
    shared_bytes: int  # per program
    num_warps: int

    def problems(self) -> list[str]:
        limit = ARCHS[self.arch].shared_limit
        out = [f"spills {self.spill_bytes} B per thread"] if self.spill_bytes else []
        if self.shared_bytes > limit:
            out.append(f"needs {self.shared_bytes} B of shared memory, {self.arch} has {limit} B")
        return out

    def __str__(self) -> str:
        config = " ".join(f"{k}={v}" for k, v in self.config)
        text = f"@{self.kernel} on {self.arch} [{config}]: {self.registers} registers, {self.spill_bytes} B spilled, {self.shared_bytes} B shared"
        return text + "".join(f"; {p}" for p in self.problems())


class AotFailure(Exception):
    """A kernel Triton does not compile for an architecture: which, where, and its source."""

    def __init__(self, kernel: Launchable, arch: str, config: dict, stage: str, error: Exception):
        self.kernel, self.arch, self.stage = kernel.name, arch, stage
        config_text = " ".join(f"{k}={v}" for k, v in config.items())
        message = str(error).strip() or type(error).__name__
        self.summary = (
            f"@{kernel.name} does not compile for {arch} [{config_text}] at stage {stage}: {type(error).__name__}"
        )
        super().__init__(f"{self.summary}: {message}\n--- kernel source ---\n{kernel.kernel}")


# -- the kernels of a module -----------------------------------------------------------------------------------------


def _numel(nest: loop.NestOp, dims) -> int:
    n = 1
    for d in dims:
        e = nest.extents[d]
        n *= e.value if isinstance(e, AffineConstantExpr) else LARGE
    return n


def _unique(configs: list[dict]) -> list[dict]:
    return [dict(c) for c in dict.fromkeys(tuple(c.items()) for c in configs)]


def launchables(module: ModuleOp, autotune: bool = True, dot: bool = True) -> list[Launchable]:
    """Every kernel the Triton target emits for a mem-stage module (the tl.dot templates of matmul='dot' when `dot`),
    with the heuristic's configuration and, when `autotune`, max-autotune's."""
    out = []
    for fn in kernel_funcs(module):
        try:
            src = kernel_source(fn)
        except Unsupported:
            continue  # runs on the reference evaluator, never on a GPU
        nest = next(o for o in fn.body.block.ops if isinstance(o, loop.NestOp) and o.outs)
        xnumel, rnumel = _numel(nest, nest.parallel_dims()), _numel(nest, nest.reduction_dims())
        configs = [blocks.heuristic(src.mode, xnumel, rnumel, src.rblock, interpret=False)]
        configs += blocks.autotune_configs(src.mode, src.rblock) if autotune else []
        out.append(Launchable(src.name, src.kernel, src.text, src.arg_types, _unique(configs)))
    for i, plan in enumerate(plan_dots(module) if dot else []):
        try:
            kern = dot_kernel(plan, i)
        except Unsupported:
            continue
        a, b = (v.type.get_shape() for v in plan.extern.ins)
        m, k, n = (LARGE if s == loop.DYN else s for s in (a[-2], a[-1], b[-1]))
        configs = [blocks.dot_heuristic(m, n, k, interpret=False)]
        tuned = blocks.dot_configs(kern.arg_types["a"] == "*fp32") if autotune else []
        configs += [{"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": w} for m, n, k, w in tuned]
        out.append(Launchable(kern.name, kern.kernel, kern.text, kern.arg_types, _unique(configs)))
    return out


# -- compiling ---------------------------------------------------------------------------------------------------------


def _jit_function(kernel: Launchable):
    """The kernel as a triton.JITFunction: under the interpreter, `triton.jit` makes interpreted functions, so the
    file is imported once more with the interpreter off."""
    from triton import knobs

    module = load_source(kernel.text)
    if not knobs.runtime.interpret:
        return getattr(module, kernel.name)
    name = module.__name__ + "_aot"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, module.__file__)
        compiled = importlib.util.module_from_spec(spec)
        with knobs.runtime.scope():
            knobs.runtime.interpret = False
            sys.modules[name] = compiled  # triton resolves the kernel's globals through its module
            spec.loader.exec_module(compiled)
    return getattr(sys.modules[name], kernel.name)


_STANDARD: dict = {}  # tl.standard's interpreted functions -> jitted twins


@contextlib.contextmanager
def _jitted_standard_library():
    """Under the interpreter, when it was on at Triton's import, tl.standard's functions (the prelude reduces with its
    combines) are interpreted ones, which the compiler cannot call: jitted twins stand in for them during a compile."""
    from triton.language import standard
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    interpreted = {n: f for n, f in vars(standard).items() if isinstance(f, InterpretedFunction)}
    for n, f in interpreted.items():
        setattr(standard, n, _STANDARD.setdefault(f, JITFunction(f.fn)))
    try:
        yield
    finally:
        for n, f in interpreted.items():
            setattr(standard, n, f)


class _Stages:
    """A Triton stages hook (knobs.runtime.add_stages_inspection_hook): remembers the stage that runs."""

    def __init__(self):
        self.current = "frontend (source -> ttir)"

    def __call__(self, *args):
        if not args:  # asked for its part of the cache key
            return "", ""
        stages = args[1]
        for ext, run in list(stages.items()):
            stages[ext] = lambda src, metadata, ext=ext, run=run: self._run(ext, run, src, metadata)

    def _run(self, ext, run, src, metadata):
        self.current = ext
        return run(src, metadata)


def _cuda_usage(cubin: bytes) -> tuple[int, int, int]:
    """(registers, local bytes, static shared bytes) of a cubin's only kernel, by cuobjdump."""
    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run(
            [knobs.nvidia.cuobjdump.path, "-res-usage", f.name], capture_output=True, text=True, check=True
        ).stdout
    usage = dict(re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", out))
    return int(usage["REG"]), int(usage["STACK"]) + int(usage["LOCAL"]), int(usage["SHARED"])


def _hip_usage(amdgcn: str) -> tuple[int, int, int]:
    """(vector registers, scratch bytes, static LDS bytes) from the kernel metadata in the AMDGCN assembly."""
    meta = dict(
        re.findall(r"^\s*\.(vgpr_count|private_segment_fixed_size|group_segment_fixed_size):\s+(\d+)", amdgcn, re.M)
    )
    return int(meta["vgpr_count"]), int(meta["private_segment_fixed_size"]), int(meta["group_segment_fixed_size"])


def compile_kernel(kernel: Launchable, arch: str, config: dict) -> Resources:
    """Compile one kernel for `arch` (a key of ARCHS) with one configuration; raises AotFailure."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    a = ARCHS[arch]
    constexprs = {k: v for k, v in config.items() if k != "num_warps"}
    stages = _Stages()
    try:
        fn = _jit_function(kernel)
        source = ASTSource(fn, {**kernel.arg_types, **dict.fromkeys(constexprs, "constexpr")}, constexprs)
        with (
            knobs.runtime.scope(),
            _jitted_standard_library(),
            contextlib.redirect_stdout(io.StringIO()),
        ):  # ptxas also prints failures
            knobs.runtime.add_stages_inspection_hook = stages
            compiled = triton.compile(
                source, target=GPUTarget(a.backend, a.arch, a.warp_size), options={"num_warps": config["num_warps"]}
            )
        registers, spill, static_shared = (
            _cuda_usage(compiled.asm["cubin"]) if a.backend == "cuda" else _hip_usage(compiled.asm["amdgcn"])
        )
    except Exception as e:  # noqa: BLE001 - whatever Triton raises, the message names the kernel and the stage
        raise AotFailure(kernel, arch, config, stages.current, e) from e
    shared = compiled.metadata.shared + static_shared
    return Resources(kernel.name, arch, tuple(config.items()), registers, spill, shared, compiled.metadata.num_warps)


def compile_all(kernels: list[Launchable], archs=tuple(ARCHS)) -> list[Resources]:
    """Every kernel with every configuration for every architecture; raises AotFailure at the first that fails."""
    return [compile_kernel(k, arch, c) for k in kernels for arch in archs for c in k.configs]


def summary(kernels: list[Launchable], archs) -> list[str]:
    """One line per kernel and architecture (the compile report's): the configuration that spills or exceeds shared
    memory, else the one needing the most registers; or where the kernel fails to compile."""
    lines = []
    for kernel in kernels:
        for arch in archs:
            try:
                compiled = [compile_kernel(kernel, arch, c) for c in kernel.configs]
            except AotFailure as e:
                lines.append(e.summary)
                continue
            lines.append(str(max(compiled, key=lambda r: (bool(r.problems()), r.registers))))
    return lines
