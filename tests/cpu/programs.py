"""Build a CPU-target Executor straight from a function (make_fx -> tn -> tensor-opt -> loop -> mem), without
Dynamo: fast enough to parametrize codegen tests widely. `strict` fails on any kernel the target could
not emit (it would otherwise run on the reference evaluator and the test would not test codegen)."""

import torch

from irc.dynamo.backend import compile_function


def build(fn, *inputs, dynamic: bool = False, strict: bool = True, cache: bool = True, matmul: str = "extern"):
    """(program, constants): call as program([*inputs, *constants])."""
    program, consts = compile_function(fn, *inputs, dynamic=dynamic, strict=True, cache=cache, matmul=matmul)
    if strict:
        kernels = [f for f in program.compiled.fallbacks if f[0].startswith("kernel")]
        assert not kernels, f"kernels on the reference evaluator: {kernels}"
    return program, consts


def tolerance(dtype: torch.dtype) -> dict:
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 1.6e-2, "atol": 1e-2}
    if dtype == torch.float32:
        return {"rtol": 2e-5, "atol": 2e-5}
    return {}


def check(fn, *inputs, dynamic: bool = False, more=(), **kw):
    """fn through the CPU target equals eager on `inputs` (and on each tuple of `more`, same program)."""
    program, consts = build(fn, *inputs, dynamic=dynamic, **kw)
    for args in (inputs, *more):
        got = program([*args, *consts])
        want = fn(*args)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
            torch.testing.assert_close(g, w, equal_nan=True, **tolerance(w.dtype))
    return program
