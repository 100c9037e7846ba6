"""Build a CPU-target Program straight from a function (make_fx -> tn -> tensor-opt -> loop -> mem), without
Dynamo: fast enough to parametrize codegen tests widely. `strict` fails on any kernel the target could
not emit (it would otherwise run on the reference evaluator and the test would not test codegen)."""

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from irc.dialects import ALL_DIALECTS
from irc.frontend.decompositions import decomposition_table
from irc.frontend.fx_import import import_graph
from irc.ir import make_context, run_passes
from irc.lowering.pipeline import TENSOR_OPT, lower
from irc.targets.cpu.graph import ArgSpec
from irc.targets.cpu.program import Program


def build(fn, *inputs, dynamic: bool = False, strict: bool = True, cache: bool = True):
    """(program, constants): call as program([*inputs, *constants])."""
    gm = make_fx(lambda *a: fn(*a), tracing_mode="symbolic" if dynamic else "fake",
                 decomposition_table=decomposition_table())(*inputs)  # fmt: skip
    res = import_graph(gm)
    module = res.module
    run_passes(make_context(ALL_DIALECTS), module, TENSOR_OPT)
    lower(module)
    metas = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"] + list(res.constants)
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"] + [f"c{i}" for i in range(len(res.constants))]
    program = Program(module, [ArgSpec.of(m, name) for m, name in zip(metas, names)], cache=cache)
    if strict:
        kernels = [f for f in program.fallbacks if f[0].startswith("kernel")]
        assert not kernels, f"kernels on the reference evaluator: {kernels}"
    return program, list(res.constants)


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
