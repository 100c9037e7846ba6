"""Build a Triton-target runner straight from a function (make_fx -> tn -> tensor-opt -> loop -> mem), without
Dynamo. `strict` fails on any kernel the target could not emit or run (it would otherwise run on the
reference evaluator and the test would not test the generated source).

Under the interpreter the tests' tensors stay on the CPU; on a machine with a GPU (TRITON_INTERPRET unset or 0)
`on_device` moves them to it, views kept as views, so the same tests run the kernels natively."""

import torch

from irc.dynamo.backend import compile_function
from irc.targets.triton import ensure_interpreter
from tests.cpu.programs import tolerance

DEVICE = torch.device("cpu" if ensure_interpreter() else "cuda")


def on_device(x):
    """A tensor (or a module, or a tuple of them) on DEVICE; a strided view keeps its strides and offset there."""
    if isinstance(x, (tuple, list)):
        return type(x)(on_device(v) for v in x)
    if isinstance(x, torch.nn.Module):
        return x.to(DEVICE)
    if not isinstance(x, torch.Tensor) or x.device.type == DEVICE.type:
        return x
    storage = x.untyped_storage()
    whole = torch.empty(0, dtype=x.dtype).set_(storage, 0, (storage.nbytes() // x.element_size(),))
    moved = whole.to(DEVICE).as_strided(x.shape, x.stride(), x.storage_offset())
    return moved.requires_grad_(x.requires_grad)


def check(fn, *inputs, dynamic: bool = False, more=(), strict: bool = True, **kw):
    """fn through the Triton target equals eager on `inputs` (and on each tuple of `more`, same runner)."""
    inputs, more = on_device(inputs), [on_device(m) for m in more]
    runner, consts = compile_function(fn, *inputs, dynamic=dynamic, target="triton", strict=True, **kw)
    consts = on_device(consts)
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
