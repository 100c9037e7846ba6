"""Ahead-of-time compiles of the Triton target's kernels for GPUs that are not here (targets/triton/aot.py): every
kernel irc emits for the demo models compiles to cubin for sm_80 and sm_90 and to hsaco for gfx942, with the block
sizes it is launched with; a kernel Triton rejects fails with its source and the stage; the resources come from the
binaries. CI compiles a bounded sample for the three architectures; the whole set is a slow test."""

import re

import pytest
import torch

from irc import report
from irc.bench import models as M
from irc.bench.check import loss_fn, targets_for, train_step, twin
from irc.targets.triton import aot, runtime
from tests.conftest import compile_irc


@pytest.fixture
def modules(monkeypatch):
    """The mem-stage module of every graph the Triton target compiles while the test runs."""
    seen = []

    class Recording(runtime.TritonRunner):
        def __init__(self, module, **kw):
            seen.append(module)
            super().__init__(module, **kw)

    monkeypatch.setattr(runtime, "TritonRunner", Recording)
    return seen


def forward(make, dynamic=False):
    model, inputs = make()
    with torch.no_grad():
        compile_irc(twin(model), target="triton", dynamic=dynamic)(*inputs)


def training(make):
    model, inputs = make()
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    train_step(mine, inputs, compile_irc(loss_fn(mine), target="triton"), target, optimizer="sgd")


def kernels_of(modules, autotune: bool) -> list[aot.Launchable]:
    """Every distinct kernel of the modules (the tl.dot templates too) with its launch configurations; kernels that
    differ only in name (the same fused body in several graphs) once."""
    unique = {}
    for module in modules:
        for k in aot.launchables(module, autotune=autotune):
            unique.setdefault((re.sub(r"def \w+\(", "def _(", k.kernel, count=1), str(k.configs)), k)
    return list(unique.values())


def check_all(kernels, archs=tuple(aot.ARCHS)) -> list[aot.Resources]:
    """Compile every kernel with each of its configurations for every architecture. None needs more shared memory
    than the device has (its launch would fail); the heuristic's blocks (each kernel's first configuration, what runs
    by default) do not spill either. A max-autotune candidate may spill: it is timed against the others."""
    resources, problems = [], []
    for kernel in kernels:
        for arch in archs:
            for i, config in enumerate(kernel.configs):
                r = aot.compile_kernel(kernel, arch, config)
                resources.append(r)
                problems += (
                    [str(r)] if (i == 0 and r.problems()) or r.shared_bytes > aot.ARCHS[arch].shared_limit else []
                )
    assert problems == []
    return resources


def test_a_non_power_of_two_block_fails_with_the_stage_and_the_source(modules):
    """The interpreter runs a block of 48 lanes; Triton's compiler rejects it: the message says which kernel, which
    architecture and blocks, the stage that rejected it, and shows the kernel."""
    x = torch.randn(6, 7)
    compile_irc(lambda t: torch.sigmoid(t) * 3, target="triton")(x)
    (kernel,) = aot.launchables(modules[0], autotune=False)
    kernel.configs = [{"XBLOCK": 48, "RBLOCK": 1, "num_warps": 4}]
    with pytest.raises(aot.AotFailure) as failure:
        aot.compile_all([kernel], ["sm_90"])
    message = str(failure.value)
    assert message.startswith(
        "@kernel0 does not compile for sm_90 [XBLOCK=48 RBLOCK=1 num_warps=4] at stage frontend"
    ), message
    assert "power of 2" in message and "--- kernel source ---\n@triton.jit\ndef kernel0(" in message, message


def test_spills_and_shared_memory_over_the_device_are_problems():
    fits = aot.Resources("kernel0", "gfx942", (("XBLOCK", 1024),), 40, 0, 65536, 4)
    assert fits.problems() == []
    big = aot.Resources("mm0", "gfx942", (("BLOCK_M", 256),), 255, 24, 65537, 8)
    assert big.problems() == ["spills 24 B per thread", "needs 65537 B of shared memory, gfx942 has 65536 B"]
    assert str(big).endswith(
        "255 registers, 24 B spilled, 65537 B shared; spills 24 B per thread; needs 65537 B of "
        "shared memory, gfx942 has 65536 B"
    )


def test_ci_sample_compiles_for_sm80_sm90_and_gfx942(modules, monkeypatch):
    """A bounded sample of the demo set, each kernel with the heuristic's blocks for the three GPUs: the MLP forward
    (pointwise kernels, its products as tl.dot templates with fused epilogues), a dynamic graph, a looped row."""
    forward(lambda: M.mlp(4))
    fn, (x, w) = M.dynamic_seq(48)
    compile_irc(fn, target="triton", dynamic=True)(x, w)
    from irc.targets.triton import source

    monkeypatch.setattr(source, "SINGLE_MAX", 8)  # rows wider than 8 loop over RBLOCK chunks
    compile_irc(lambda t: torch.softmax(t, -1), target="triton")(torch.randn(3, 37))
    kernels = kernels_of(modules, autotune=False)
    assert {k.name[:2] for k in kernels} >= {"ke", "mm"}, [k.name for k in kernels]
    assert any("for roff in range(0, rnumel, RBLOCK)" in k.kernel for k in kernels)
    resources = check_all(kernels)
    assert len(resources) == 3 * len(kernels)


def test_runner_lists_resources_for_the_report(modules):
    compile_irc(lambda t: torch.softmax(t * 2, -1), target="triton")(torch.randn(4, 9))
    runner = runtime.TritonRunner(modules[0], archs=("sm_90", "gfx942"))
    assert [line.split(" [")[0] for line in runner.resources] == ["@kernel0 on sm_90", "@kernel0 on gfx942"]
    assert all("registers" in line for line in runner.resources), runner.resources
    rep = report.GraphReport(
        index=0, dynamo_graph=1, kind="inference", target="triton", kernel_resources=runner.resources
    )
    assert f"    {runner.resources[0]}\n" in str(rep), str(rep)


def test_irc_triton_arch_puts_resources_in_the_compile_report(monkeypatch):
    monkeypatch.setenv("IRC_TRITON_ARCH", "sm_90")
    mark = report.mark()
    compile_irc(lambda t: torch.softmax(t * 3, -1), target="triton")(torch.randn(4, 9))
    (g,) = [g for g in report.reports_since(mark).graphs if g.target == "triton"]
    assert g.kernel_resources and all(" on sm_90" in line and "registers" in line for line in g.kernel_resources), str(
        g
    )


DEMO = {
    "mlp": lambda: forward(lambda: M.mlp(4)),
    "mlp-training": lambda: training(lambda: M.mlp(4)),
    "convnet-eval": lambda: forward(lambda: M.convnet(batch=2)),
    "convnet-training": lambda: training(lambda: M.convnet(batch=2, train=True)),
    "mini-transformer-mask": lambda: forward(lambda: M.mini_transformer(batch=2, seq=16, mask=True)),
    "mini-transformer-training": lambda: training(lambda: M.mini_transformer(batch=2, seq=16)),
    "self-attention": lambda: forward(lambda: M.self_attention(batch=2, seq=16, d_model=32, heads=4)),
    "torch-transformer": lambda: forward(lambda: M.torch_transformer(batch=2, seq=16)),
    "dynamic-seq": lambda: compile_irc(M.dynamic_seq(48)[0], target="triton", dynamic=True)(*M.dynamic_seq(48)[1]),
    "graph-break": lambda: compile_irc(M.graph_break_fn, target="triton")(*M.graph_break()[1]),
}


@pytest.mark.slow
def test_every_demo_model_kernel_compiles_for_sm80_sm90_and_gfx942(modules, monkeypatch):
    """The whole set: every kernel of the demo models (forward and training, static and dynamic; the tl.dot
    templates; rows looped) with the heuristic's blocks and every max-autotune candidate, for the three GPUs."""
    for run in DEMO.values():
        torch._dynamo.reset()
        run()
    from irc.targets.triton import source

    monkeypatch.setattr(source, "SINGLE_MAX", 64)  # the layer norms and softmaxes of the transformer as looped rows
    torch._dynamo.reset()
    DEMO["mini-transformer-training"]()
    kernels = kernels_of(modules, autotune=True)
    assert sum("for roff in range(0, rnumel, RBLOCK)" in k.kernel for k in kernels) >= 5
    resources = check_all(kernels)
    assert {r.arch for r in resources} == set(aot.ARCHS)


@pytest.mark.parametrize("case", ["bmm-n1", "mm-m1", "linear-1d"])
def test_matmul_epilogue_with_a_size_1_dim_compiles(modules, case):
    """A product with a size-1 dim (N = 1, M = 1, a 1-D input to linear) and its epilogue fused: the store's offset
    has no term for that dim, and was stored as a [1, BLOCK_N] pointer of a [BLOCK_M, BLOCK_N] tile, which the
    interpreter broadcasts and Triton rejects ("Expected pointer argument to have shape"; irc-fuzz, seed 101)."""
    fn, inputs = {
        "bmm-n1": (lambda a, b: -torch.bmm(-a, b), (torch.randn(2, 3, 2), torch.randn(2, 2, 1))),
        "mm-m1": (lambda a, b: -(a.reshape(1, 3) @ b), (torch.randn(3), torch.randn(3, 5))),
        "linear-1d": (
            lambda a, w, c: torch.nn.functional.linear(a, w, c),
            (torch.randn(2), torch.randn(3, 2), torch.randn(3)),
        ),
    }[case]
    with torch.no_grad():
        torch.testing.assert_close(compile_irc(fn, target="triton", matmul="dot")(*inputs), fn(*inputs))
    kernels = kernels_of(modules, autotune=False)
    assert any(k.name.startswith(("mm", "bmm")) and "_kernel" in k.name for k in kernels), [k.name for k in kernels]
    check_all(kernels, archs=("sm_90",))


def test_a_load_of_scalars_under_a_block_mask_compiles(modules):
    """split of a cat of a (1, 1, 2) input: the load of its size-1 dims has a scalar pointer (every term dropped) but
    a block mask (the cat's bounds check), which the interpreter runs and Triton rejects ("Mask argument cannot be
    block type if pointer argument is not a block"; irc-fuzz, seed 401, 1483 s). The pointer is now a block."""

    def fn(a):
        return (-torch.cat([a, a], dim=0).neg()).split(1, dim=2)[1]

    a = torch.tensor([[[0.5, -1.25]]])
    with torch.no_grad():
        torch.testing.assert_close(compile_irc(fn, target="triton")(a), fn(a))
    check_all(kernels_of(modules, autotune=False), archs=("sm_90",))
