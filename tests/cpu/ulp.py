"""Run a mathlib builder through a JITed kernel and measure float32 ulp error against a float64 reference."""

import ctypes
import math

import torch
from llvmlite import ir

from irc.targets.cpu.codegen import mathlib
from irc.targets.cpu.runtime import jit
from tests.cpu.kernels import map_kernel

_LIBS = {}


def jit_map(name: str, nin: int = 1, lanes: int = 16, elem=None):
    """A callable f(*tensors) -> tensor applying mathlib.FUNCTIONS[name] through a compiled kernel."""
    from tests.cpu.kernels import F32

    elem = elem or F32
    key = (name, nin, lanes, str(elem))
    if key not in _LIBS:
        m = ir.Module()
        map_kernel(m, "k", mathlib.FUNCTIONS[name], nin, lanes, elem)
        lib = jit.compile_module(m)
        _LIBS[key] = lib.function("k", None, *[ctypes.c_int64] + [ctypes.c_void_p] * (nin + 1))
    fn = _LIBS[key]

    def run(*xs):
        xs = [x.contiguous() for x in xs]
        out = torch.empty_like(xs[0])
        fn(out.numel(), out.data_ptr(), *[x.data_ptr() for x in xs])
        return out

    return run


def ulp_error(got: torch.Tensor, ref64: torch.Tensor) -> torch.Tensor:
    """|got - ref| in units of the float32 ulp at ref (subnormal ulp 2^-149 at the bottom).

    Equal specials (NaN/NaN, inf/inf) count 0; a NaN or inf against anything else counts inf."""
    g = got.double()
    r32 = ref64.float().double()
    _, e = torch.frexp(ref64)
    ulp = torch.ldexp(torch.ones_like(ref64), (e - 24).clamp(min=-149))
    err = (g - ref64).abs() / ulp
    same = (g == r32) | (torch.isnan(g) & torch.isnan(ref64))
    err = torch.where(same, torch.zeros_like(err), err)
    special = ~torch.isfinite(g) | ~torch.isfinite(r32)
    return torch.where(special & ~same, torch.full_like(err, math.inf), err)


def worst(got, ref64, x):
    err = ulp_error(got, ref64)
    i = int(torch.argmax(torch.nan_to_num(err, posinf=1e30)))
    return float(err[i]), float(x[i]), float(got[i]), float(ref64[i])
