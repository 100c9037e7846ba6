"""The CPU that IRC_CPU names, as (triple, CPU name, LLVM feature string): what jit.host() answers.

    native          this machine (LLVM's host triple, CPU name and features)
    x86-64-v2       SSE4.2, 128-bit vectors        (the psABI levels; LLVM knows them as CPU names)
    x86-64-v3       AVX2 and FMA, 256-bit vectors
    x86-64-v4       AVX-512 (F, BW, CD, DQ, VL)
    skylake, ...    an LLVM x86-64 CPU name: its features are read off LLVM's code for a few probe functions
    aarch64[:cpu]   aarch64-unknown-linux-gnu with NEON (cpu: an LLVM AArch64 CPU name, default generic);
                    code is generated for it but cannot run on this machine

llvmlite does not expose a target CPU's feature list, so a named x86 CPU is asked through its code: a
<16 x float> add in zmm registers means AVX-512F, a vpabsq on xmm AVX-512VL, and so on. Only the features
irc's decisions read (jit.HostInfo.has) are probed; the rest come with the CPU name itself.
"""

from __future__ import annotations

import os
import re
import tempfile

from irc import env

from .compile_worker import llvm

AARCH64 = "aarch64-unknown-linux-gnu"
_BASE = "+64bit,+cmov,+cx8,+fxsr,+mmx,+sse,+sse2"
_V2 = _BASE + ",+cx16,+sahf,+popcnt,+sse3,+ssse3,+sse4.1,+sse4.2"
_V3 = _V2 + ",+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave"
_V4 = _V3 + ",+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl"
LEVELS = {"x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4}


def _probe_fn(name: str, ty: str, body: str) -> str:
    return f"define void @{name}(ptr %p) {{\n  %a = load {ty}, ptr %p\n  %c = {body}\n  store {ty} %c, ptr %p\n  ret void\n}}\n"


# feature -> (probe function, its type, its body, what its assembly shows when the CPU has the feature)
_PROBES = {
    "avx512f": ("<16 x float>", "fadd <16 x float> %a, %a", r"zmm"),
    "avx512vl": ("<2 x i64>", "call <2 x i64> @llvm.abs.v2i64(<2 x i64> %a, i1 false)", r"vpabsq"),
    "avx2": ("<8 x i32>", "add <8 x i32> %a, %a", r"vpaddd\s.*%ymm"),
    "avx": ("<8 x float>", "fadd <8 x float> %a, %a", r"ymm"),
    "fma": (
        "<4 x float>",
        "call <4 x float> @llvm.fma.v4f32(<4 x float> %a, <4 x float> %a, <4 x float> %a)",
        r"vfmadd",
    ),
    "sse4.1": ("<4 x float>", "call <4 x float> @llvm.floor.v4f32(<4 x float> %a)", r"roundps"),
}
_DECLS = """declare <2 x i64> @llvm.abs.v2i64(<2 x i64>, i1)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <4 x float> @llvm.floor.v4f32(<4 x float>)
"""


def parse(spec: str) -> tuple[str, str]:
    """(triple or "" for the process's, CPU name or "" for the host's) of an IRC_CPU value."""
    if spec == "native":
        return "", ""
    if spec == "aarch64" or spec.startswith("aarch64:"):
        return AARCH64, spec.partition(":")[2] or "generic"
    return llvm().get_process_triple(), spec


def _asm(triple: str, cpu: str, text: str, features: str = "") -> tuple[str, str]:
    """LLVM's assembly for `text` on that CPU, and what LLVM printed on stderr meanwhile (its warning about a CPU
    name it does not know goes there, from C++, so the file descriptor itself is redirected)."""
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        try:
            os.dup2(err.fileno(), 2)
            tm = llvm().Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=0)
            mod = llvm().parse_assembly(text)
            mod.triple = triple
            asm = tm.emit_assembly(mod)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return asm, err.read().decode(errors="replace")


def check_cpu(triple: str, cpu: str) -> None:
    """EnvError unless LLVM knows `cpu` for `triple` (LLVM would otherwise ignore it, or abort on x86-64)."""
    _, err = _asm(triple, cpu, "")
    if "not a recognized processor" in err:
        raise env.EnvError(f"irc: IRC_CPU names {cpu!r}, which LLVM does not know as a CPU for {triple}")


def probe_features(triple: str, cpu: str) -> str:
    """The feature string of the x86-64 features irc reads, as LLVM's code for `cpu` shows them."""
    text = "".join(_probe_fn(f"probe_{i}", ty, body) for i, (ty, body, _) in enumerate(_PROBES.values())) + _DECLS
    asm, _ = _asm(triple, cpu, text, "-prefer-256-bit")  # Intel tunings would split the 512-bit probe
    bodies = dict(re.findall(r"^(probe_\d+):\n(.*?)\.Lfunc_end", asm, re.DOTALL | re.MULTILINE))
    found = [re.search(sign, bodies[f"probe_{i}"]) for i, (_, _, sign) in enumerate(_PROBES.values())]
    return ",".join(("+" if hit else "-") + name for name, hit in zip(_PROBES, found, strict=True))


def resolve(spec: str) -> tuple[str, str, str]:
    """(triple, CPU name, feature string) for an IRC_CPU value other than native."""
    triple, cpu = parse(spec)
    if triple == AARCH64:
        llvm().initialize_all_targets()
        llvm().initialize_all_asmprinters()
        check_cpu(triple, cpu)
        return triple, cpu, "+neon"
    if cpu in LEVELS:
        return triple, cpu, LEVELS[cpu]
    check_cpu(triple, cpu)
    return triple, cpu, probe_features(triple, cpu)
