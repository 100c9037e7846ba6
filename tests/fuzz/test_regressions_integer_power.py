"""Integer powers the one-hour irc-fuzz campaigns found wrong or hung (seeds 201 and 1001; docs/fuzzing.md), one
test each, written as the shrunk program the campaign printed."""

import pytest
import torch

import irc

from .conftest import targets


@pytest.mark.parametrize("target", targets())
def test_integer_power_with_negative_exponents(target):
    """int32 x ** x with negative exponents: torch's kernel gives 0, or +-1 for a base of +-1; the triton target's
    square-and-multiply shifted a negative exponent forever (-1749801491 for 0; seed 201, 2008 s)."""
    from irc.tools.fuzz.oracle import compare

    def fn(a0):
        return (a0**a0,)

    def make_inputs():
        return [torch.tensor([[-3, -1, 0, 1], [2, -2, 5, -5]], dtype=torch.int32)]

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=irc.backend, options={"strict": True, "target": target})
    assert compare(fn, compiled, make_inputs) is None


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8])
@pytest.mark.parametrize("target", targets())
def test_integer_power_of_0d_tensors_compiles_promptly(target, dtype):
    """A 0-d integer `a ** b`: the cpu target's square-and-multiply, unrolled over 64 bits as scalar code, kept LLVM's
    optimiser busy for minutes and the campaign hung (seed 1001, at 15 s; found as the program of running.py). A
    scalar now loops over the exponent's bits; the run has a 60 s limit (it compiles in well under a second)."""
    import faulthandler

    from irc.tools.fuzz.oracle import compare

    def fn(a0, a1):
        return (a0.unbind(0)[-4] ** a1, torch.log(a1))

    def make_inputs(seed=0, grow=0):
        g = torch.Generator().manual_seed(seed)
        return [torch.randint(-24, 25, (4,), generator=g).to(dtype), torch.randint(-24, 25, (), generator=g).to(dtype)]

    torch._dynamo.reset()
    faulthandler.dump_traceback_later(60, exit=True)  # a hang in native code ignores Python's signals
    try:
        compiled = torch.compile(fn, backend=irc.backend, options={"strict": True, "target": target, "cache": False})
        assert compare(fn, compiled, make_inputs) is None
        for base, exponent in ((2, 5), (-3, 3), (0, -2), (-1, -3), (1, -7), (5, -24)):
            args = [torch.tensor([base, 0, 0, 0], dtype=dtype), torch.tensor(exponent, dtype=dtype)]
            assert torch.equal(compiled(*args)[0], fn(*args)[0]), (base, exponent)
    finally:
        faulthandler.cancel_dump_traceback_later()
