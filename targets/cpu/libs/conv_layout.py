"""The speed of torch's convolution in each layout, as the CPU extern runs it, measured once per shape.

    conv_seconds(x=[8, 64, 56, 56], w=[64, 64, 3, 3], stride=[1, 1], padding=[1, 1], dilation=[1, 1],
                 groups=1, dtype="f32", bias=False, use_cache=True) -> (nchw_s, nhwc_s, same) or None

Each layout times what targets/cpu/libs/extern_ops.py does for a convolution in that layout: the path
ConvKernel chooses for an input in that layout, and the copy of its result into an output buffer of
that layout. `same`: every channels-last path gives NCHW's result bit for bit (on random inputs), so the
timing may choose the layout without changing a number (whether they do depends on the shape, so it is checked
per problem). The two run interleaved (targets/timing.py measure). Results are kept in memory and on disk
(irc/cache.py, kind "layout", unless use_cache=False), keyed by the problem, the CPU, the thread count
and the versions, so a second process measures nothing. select-layout (lowering/) receives this
function from the frontend.
Anything that goes wrong gives None (the pass then estimates).
"""

from __future__ import annotations

import logging
import math

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

from irc.targets import timing

from . import externs, tuning
from .measured import Measured

log = logging.getLogger("irc.fallbacks")  # irc.log topic
DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16}
TIMINGS = Measured("layout")  # (nchw, nhwc) seconds per convolution problem, in memory and on disk
STATS = TIMINGS.stats


def _measure(x, w, stride, padding, dilation, groups, dtype, bias) -> tuple[float, float]:
    g = torch.Generator().manual_seed(0)
    xt = torch.randn(x, generator=g).to(dtype)
    assert not isinstance(xt, FakeTensor), "convolution timing needs real tensors"
    wt = torch.randn(w, generator=g).to(dtype)
    bt = torch.randn(w[0], generator=g).to(dtype) if bias else None
    k = externs.ConvKernel(wt, bt, stride, padding, dilation, groups, constant=False)
    y = k.run(xt, "aten")
    runs = {}
    for name, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
        xin = xt.contiguous(memory_format=fmt)
        out = torch.empty_like(y, memory_format=fmt)
        path = k.choose(xin)
        runs[name] = lambda xin=xin, out=out, path=path: out.copy_(k.run(xin, path))
    # the layouts give the same numbers when every channels-last path the extern may take equals NCHW's bit for bit
    xcl = xt.contiguous(memory_format=torch.channels_last)
    packed = externs.ConvKernel(wt, bt, stride, padding, dilation, groups, constant=True)
    same = all(torch.equal(y, kk.run(xcl, p)) for kk in (k, packed) for p in kk.paths() if p != "aten")
    times = timing.measure(runs, reps=tuning.CONV_REPS, budget_s=tuning.CONV_BUDGET_S)
    return times["nchw"], times["nhwc"], same


def flops(x, w, stride, padding, dilation) -> int:
    out = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in zip(x[2:], w[2:], stride, padding, dilation)]
    return 2 * x[0] * w[0] * math.prod(out) * math.prod(w[1:])


def conv_seconds(
    *, x, w, stride, padding, dilation, groups, dtype: str, bias: bool, use_cache: bool = True
) -> tuple[float, float, bool] | None:
    """(seconds in NCHW, seconds in NHWC, whether both give the same numbers) for one convolution, or None when
    it cannot be measured or is too small to be worth measuring (below tuning.CONV_MIN_FLOPS the layouts differ by
    microseconds; the pass estimates)."""
    if dtype not in DTYPES or len(x) != 4 or flops(x, w, stride, padding, dilation) < tuning.CONV_MIN_FLOPS:
        return None
    problem = repr(("v2", list(x), list(w), list(stride), list(padding), list(dilation), groups, dtype, bias))

    def measure() -> dict:
        with unset_fake_temporarily(), torch.no_grad():  # real tensors, even while a compile traces with fake ones
            nchw, nhwc, same = _measure(x, w, stride, padding, dilation, groups, DTYPES[dtype], bias)
        return {"problem": problem, "nchw": nchw, "nhwc": nhwc, "same": same}

    try:
        rec = TIMINGS.get(problem, measure, use_cache=use_cache)
    except Exception as e:  # noqa: BLE001 - a measurement is advice: the pass estimates instead
        log.info("irc: convolution layout timing failed for %s (%s)", problem, e)
        return None
    return rec["nchw"], rec["nhwc"], rec["same"]


__all__ = ["STATS", "conv_seconds"]
