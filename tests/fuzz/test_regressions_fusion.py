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


def test_scalar_nests_nothing_reads_are_dropped_not_merged_into_an_empty_nest():
    """fuse-loops run alone on a training graph's IR before simplify-loop (irc-opt can run any pass on any stage):
    batch_norm's unused 0-d constants (its momentum's 0 and 1) were merged into one 0-d nest yielding nothing,
    which the verifier rejects ("has either tensor results or `outs` buffers": the per-pass property, seed 1127,
    64 s). Nests of scalars that nothing reads now go."""
    from xdsl.dialects import func

    from irc.dialects import ALL_DIALECTS, loop
    from irc.ir import make_context, parse_module
    from irc.lowering.fusion.fuse import FuseLoopsPass

    src = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32> {
        %0 = arith.constant 0.000000e+00 : f32
        loop.yield %0 : f32
      }
      %b = loop.nest space = affine_map<() -> ()> iterators = [] : tensor<f32> {
        %0 = arith.constant 1.000000e+00 : f32
        loop.yield %0 : f32
      }
      %y = loop.nest space = affine_map<() -> (2)> iterators = ["parallel"] : tensor<2xf32> {
        %0 = loop.load %x[affine_map<(d0) -> (d0)>] : tensor<2xf32> -> f32
        %1 = arith.negf %0 : f32
        loop.yield %1 : f32
      }
      func.return %y : tensor<2xf32>
    }"""
    ctx = make_context(ALL_DIALECTS)
    module = parse_module(ctx, src)
    FuseLoopsPass().apply(ctx, module)
    module.verify()
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert [op.rank for op in f.body.block.ops if isinstance(op, loop.NestOp)] == [1]
