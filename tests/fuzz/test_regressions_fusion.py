"""Fusion bugs the one-hour irc-fuzz campaigns found (docs/fuzzing.md), one test each, written as the shrunk program
the campaign printed."""

import pytest
import torch

import irc

from .conftest import targets


@pytest.mark.parametrize("target", targets())
def test_kept_producer_behind_eager_calls_compiles(target):
    """Training of an in-place relu on one element of a dynamic vector: the backward's zeros feed, through a view, an
    eager select, and another eager select feeds the where that reads the zeros. Fusing the zeros into the where
    with their results kept had to move both selects after the fused nest (eager calls keep their order), and the
    nest reads the second: "fusion created a cycle" (seed 1201, 593 s). Such a producer now stays."""
    from irc.tools.fuzz.oracle import compare_training

    def fn(a0):
        v1 = (_t3 := a0.clone(), _t3[1].relu_(), _t3)[2]
        return (torch.neg(torch.neg(torch.sign(v1))),)

    def make_inputs(grow=0):
        a0 = torch.tensor([-1.5, 0.375, 2.0][: 2 + grow]).requires_grad_()
        torch._dynamo.maybe_mark_dynamic(a0, 0)
        return [a0]

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=irc.backend, options={"strict": True, "target": target})
    assert compare_training(fn, compiled, make_inputs) is None
    assert compare_training(fn, compiled, lambda: make_inputs(grow=1)) is None
