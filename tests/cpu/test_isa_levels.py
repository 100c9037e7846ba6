"""IRC_CPU: code generated for x86-64-v2 (SSE4.2) and x86-64-v3 (AVX2, FMA), which this AVX-512 machine also runs,
matches eager; its machine code has that level's vector width (so an ignored IRC_CPU fails here); the AVX-512-only
paths' fallbacks (exp without vscalefps, rsqrt without vrsqrt14ps) keep their ulp bounds. IRC_CPU=aarch64 generates
the demo models' kernels for aarch64 and compiles them to AArch64 objects with no x86 intrinsic in them.

Each level runs in a child process (jit.host() is read once per process), with its own cache directory."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])
LEVELS = {"x86-64-v2": (4, ("%ymm", "%zmm")), "x86-64-v3": (8, ("%zmm",))}  # f32 lanes, registers it must not use
MATH = ["exp", "log", "tanh", "sin", "rsqrt", "erf", "gelu"]

_CHILD = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import torch, torch.nn.functional as F
    import irc
    from irc.bench import models
    from irc.targets.cpu.runtime import jit
    from tests.cpu.test_mathlib import CASES, lin
    from tests.cpu.ulp import jit_map, worst

    sources = []
    compile_module = jit.compile_module
    def recording(module, **kw):
        sources.append(str(module))
        return compile_module(module, **kw)
    jit.compile_module = recording

    torch.manual_seed(0)
    opts = {"strict": True}
    out = {"lanes": jit.host().lanes(32), "cpu": jit.host().cpu, "checks": {}}
    def check(name, got, want, tol=1e-5):
        ok = all(torch.allclose(g, w, rtol=tol, atol=tol) for g, w in zip(got, want))
        out["checks"][name] = ok or f"max diff {max(float((g - w).abs().max()) for g, w in zip(got, want))}"

    def run(name, fn, *xs, tol=1e-5):
        with torch.no_grad():
            check(name, [torch.compile(fn, backend=irc.backend, options=opts)(*xs)], [fn(*xs)], tol)

    run("elementwise tails", lambda x, y: torch.relu(x * y + 1) - torch.sigmoid(x), torch.randn(5, 131), torch.randn(131))
    run("sum and amax", lambda x: torch.cat([x.sum(-1), x.amax(-1), x.sum(0)]), torch.randn(7, 131), tol=1e-4)
    run("softmax", lambda x: torch.softmax(x, -1), torch.randn(6, 77))
    run("layer_norm", lambda x, w, b: F.layer_norm(x, (77,), w, b), torch.randn(6, 77), torch.randn(77), torch.randn(77), tol=1e-4)
    run("gather", lambda x, i: torch.gather(x, 1, i), torch.randn(9, 40), torch.randint(0, 40, (9, 13)))

    model, (x,) = models.convnet(batch=4)
    run("convnet forward", model, x, tol=1e-4)

    model, (x,) = models.mlp(batch=8)
    compiled = torch.compile(model, backend=irc.backend, options=opts)
    grads = []
    for m in (compiled, model):
        model.zero_grad()
        torch.nn.functional.cross_entropy(m(x), torch.arange(8) % 10).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    check("mlp training step", grads[0], grads[1], tol=1e-4)

    for name in sys.argv[2].split(","):
        ref, sweeps, bound = CASES[name]
        for lanes in (out["lanes"], 16):
            f = jit_map(name, lanes=lanes)
            errs = [worst(f(x), ref(x.double()), x) for x in [lin(-3, 3, 20_001), *(s[::50] for s in sweeps)]]
            err = max(errs)
            out["checks"][f"{name} x{lanes}"] = err[0] <= bound or f"{err[0]:.2f} ulp at {err[1]!r} (bound {bound})"
    # jit_map compiles through the Engine directly: its kernels are not in `sources`, their width is in the checks
    out["asm"] = "\\n".join(jit.engine().assembly(s) for s in sources)
    out["kernels"] = len(sources)
    print(json.dumps(out))
""")


def _start(cpu: str, tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "IRC_CPU": cpu, "IRC_CACHE_DIR": str(tmp / cpu), "IRC_PROGRESS": "0"}
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, ROOT, ",".join(MATH)],
        env=env,
        cwd=str(tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def levels(tmp_path_factory):
    """Both levels' children at once (each is mostly single-threaded compile work)."""
    tmp = tmp_path_factory.mktemp("isa")
    procs = {cpu: _start(cpu, tmp) for cpu in LEVELS}
    results = {}
    for cpu, p in procs.items():
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, f"IRC_CPU={cpu}: child failed\n{stderr[-4000:]}"
        results[cpu] = json.loads(stdout.strip().splitlines()[-1])
    return results


@pytest.mark.parametrize("cpu", list(LEVELS))
def test_level_matches_eager_and_keeps_the_ulp_bounds(levels, cpu):
    r = levels[cpu]
    assert r["cpu"] == cpu and r["lanes"] == LEVELS[cpu][0], r
    failed = {name: why for name, why in r["checks"].items() if why is not True}
    assert not failed, f"IRC_CPU={cpu}: {failed}"
    assert len(r["checks"]) == 7 + 2 * len(MATH)


@pytest.mark.parametrize("cpu", list(LEVELS))
def test_level_code_has_that_vector_width(levels, cpu):
    asm = levels[cpu]["asm"]
    assert levels[cpu]["kernels"] >= 5 and "%xmm" in asm
    for reg in LEVELS[cpu][1]:
        assert reg not in asm, f"IRC_CPU={cpu}: the machine code uses {reg} registers"
    if cpu == "x86-64-v3":
        assert "%ymm" in asm and "vfmadd" in asm


_AARCH64 = textwrap.dedent("""
    import json, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from irc.targets.cpu.runtime import jit
    ir_text = subprocess.run(
        [sys.executable, "-m", "irc.tools.opt", "--split-input-file", sys.argv[2], "-t", "llvm"],
        capture_output=True, text=True, check=True,
    ).stdout
    modules = [m for m in ir_text.split("// -----") if "define " in m]  # the forward and the backward graph
    machines = sorted({jit.engine().object_code(m)[18] for m in modules})
    asm = "\\n".join(jit.engine().assembly(m) for m in modules)
    try:
        jit.engine().compile(modules[0])
        refused = False
    except jit.ForeignCPU:
        refused = True
    h = jit.host()
    print(json.dumps({"triple": h.triple, "cpu": h.cpu, "lanes": h.lanes(32), "ir": ir_text, "modules": len(modules),
                      "elf_machines": machines,
                      "neon": asm.count(".4s"), "refused": refused}))
""")


def test_aarch64_code_is_generated_and_compiles_to_aarch64_objects(tmp_path):
    """IRC_CPU=aarch64 needs llvmlite's AArch64 backend (its wheels carry it): without one this fails, as the
    option itself would."""
    env = {**os.environ, "IRC_CACHE_DIR": str(tmp_path / "cache"), "IRC_PROGRESS": "0"}
    mem = tmp_path / "convnet.mlir"
    capture = ["--model", "irc.bench.models:make_convnet", "--inputs", "4x3x32x32xf32", "--backward", "--stage", "mem"]
    mem.write_text(
        subprocess.run(
            [sys.executable, "-m", "irc.tools.opt", *capture], capture_output=True, text=True, check=True, env=env
        ).stdout
    )
    env["IRC_CPU"] = "aarch64:neoverse-v1"
    p = subprocess.run(
        [sys.executable, "-c", _AARCH64, ROOT, str(mem)], capture_output=True, text=True, env=env, check=False
    )
    assert p.returncode == 0, p.stderr[-4000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert (r["triple"], r["cpu"], r["lanes"]) == ("aarch64-unknown-linux-gnu", "neoverse-v1", 4)
    assert 'target triple = "aarch64-unknown-linux-gnu"' in r["ir"] and r["ir"].count("define ") >= 5
    assert "llvm.x86" not in r["ir"] and "reference evaluator" not in r["ir"]
    assert r["modules"] == 2 and r["elf_machines"] == [183], "not AArch64 ELF objects (EM_AARCH64)"
    assert r["neon"] > 0 and r["refused"]  # NEON f32x4 code; compile() will not load it


@pytest.mark.parametrize(
    "cpu, has, lacks",
    [
        ("haswell", {"avx2", "fma", "avx", "sse4.1"}, {"avx512f", "avx512vl"}),
        ("skylake-avx512", {"avx512f", "avx512vl", "avx2", "fma"}, set()),
        ("nehalem", {"sse4.1"}, {"avx", "avx2", "fma", "avx512f"}),
    ],
)
def test_a_named_cpus_features_are_read_off_llvms_code(cpu, has, lacks):
    """IRC_CPU=<LLVM CPU name>: the features irc reads come from the code LLVM generates for that CPU."""
    import llvmlite.binding as llvm

    from irc.targets.cpu.runtime import isa, jit

    jit.engine()  # LLVM's targets initialised
    flags = dict((f[1:], f[0] == "+") for f in isa.probe_features(llvm.get_process_triple(), cpu).split(","))
    assert {f for f, on in flags.items() if on} >= has and not {f for f, on in flags.items() if on} & lacks, flags
