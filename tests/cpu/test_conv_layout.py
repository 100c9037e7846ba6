"""The convolution timer of select-layout (targets/cpu/libs/conv_layout.py) times real convolutions in both
layouts, also when called while a compile traces with fake tensors, and remembers each shape."""

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from irc.targets import timing
from irc.targets.cpu.libs import conv_layout, externs

PROBLEM = dict(
    x=[1, 16, 64, 64],
    w=[32, 16, 3, 3],
    stride=[1, 1],
    padding=[1, 1],
    dilation=[1, 1],
    groups=1,
    dtype="f32",
    bias=True,
)


def test_times_real_convolutions_in_both_layouts_under_fake_mode(monkeypatch):
    seen = {}

    def measure(candidates, **kw):
        for name, fn in candidates.items():  # also ConvKernel's own path choice (aten, aten_cl)
            out = fn()
            seen[name] = (isinstance(out, FakeTensor), out.is_contiguous(memory_format=torch.channels_last))
        return {name: 1.0 + i for i, name in enumerate(candidates)}

    monkeypatch.setattr(timing, "measure", measure)
    monkeypatch.setattr(conv_layout.TIMINGS, "memory", {})
    with FakeTensorMode():
        first = conv_layout.conv_seconds(**PROBLEM, use_cache=False)
        assert first[:2] == (1.0, 2.0) and isinstance(first[2], bool)
        assert conv_layout.conv_seconds(**PROBLEM, use_cache=False) == first  # remembered: measured once
    assert {k: seen[k] for k in ("nchw", "nhwc")} == {"nchw": (False, False), "nhwc": (False, True)}
    assert not any(fake for fake, _ in seen.values())
    assert conv_layout.STATS["measured"] >= 1


def test_unmeasurable_problems_give_none():
    assert conv_layout.conv_seconds(**{**PROBLEM, "dtype": "i32"}) is None
    assert conv_layout.conv_seconds(**{**PROBLEM, "x": [1, 3, 5], "w": [2, 3, 3]}) is None
    assert conv_layout.conv_seconds(**{**PROBLEM, "x": [1, 3, 5, 7]}) is None  # too small to be worth measuring


def test_same_says_whether_every_channels_last_path_gives_nchws_numbers(monkeypatch):
    monkeypatch.setattr(timing, "measure", lambda candidates, **kw: {name: 1.0 for name in candidates})
    run = externs.ConvKernel.run

    def nudged(path):
        def fake(self, x, p):
            y = run(self, x.contiguous(), "aten")  # every path computes NCHW's numbers...
            return y + 1e-3 if p == path else y  # ...except the one nudged

        return fake

    for path, same in ((None, True), ("aten_cl", False), ("mkldnn_packed", False)):
        monkeypatch.setattr(conv_layout.TIMINGS, "memory", {})
        monkeypatch.setattr(externs.ConvKernel, "run", nudged(path))
        if path == "mkldnn_packed" and not externs.onednn_available(torch.float32):
            continue
        assert conv_layout.conv_seconds(**PROBLEM, use_cache=False)[2] is same, path


def test_a_widened_dtype_is_timed_as_the_float32_convolution_it_runs(monkeypatch):
    """Where torch's library has no kernels for a narrow dtype (externs.widened_products), the convolution runs as a
    float32 one (split-addmm): select-layout's timer times that, not torch's reference loop in the narrow dtype
    (a bf16 ConvNet's first call took 15 s on an AVX2 host timing those)."""
    from irc.options import Options
    from irc.targets.cpu.target import CpuTarget

    asked = []
    monkeypatch.setattr(
        conv_layout, "conv_seconds", lambda **problem: asked.append(problem["dtype"]) or (1.0, 2.0, True)
    )
    timer = CpuTarget().rules([], Options()).conv_timer
    for dtype, name in (("bf16", "bfloat16"), ("f16", "float16"), ("f32", None)):
        timer(**{**PROBLEM, "dtype": dtype})
        assert asked.pop() == ("f32" if name in externs.widened_products() else dtype)
