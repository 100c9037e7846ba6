"""Build a Triton-target runner straight from a function (make_fx -> tn -> tensor-opt -> loop -> mem), without
Dynamo. `strict` fails on any kernel the target could not emit or run (it would otherwise run on the
reference evaluator and the test would not test the generated source)."""

import torch

from irc.frontend.backend import compile_function
from tests.cpu.programs import tolerance


def check(fn, *inputs, dynamic: bool = False, more=(), strict: bool = True, **kw):
    """fn through the Triton target equals eager on `inputs` (and on each tuple of `more`, same runner)."""
    runner, consts = compile_function(fn, *inputs, dynamic=dynamic, target="triton", strict=True, **kw)
    for args in (inputs, *more):
        got = runner([*args, *consts])
        want = fn(*args)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
            torch.testing.assert_close(g, w, equal_nan=True, **tolerance(w.dtype))
    if strict:
        assert not runner.fallbacks, f"kernels on the reference evaluator: {runner.fallbacks}"
    return runner
