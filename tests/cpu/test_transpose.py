"""Transposed reads in registers (targets/cpu/codegen/transpose.py): a pointwise kernel reading a buffer across its lines
loads whole vectors along the lines and transposes L x L blocks by shuffles instead of gathering lane by lane.
Whole blocks, the rows and columns short of one (odd sizes, vector tails), every dtype and runtime sizes give
eager's numbers."""

import pytest
import torch

from tests.cpu.programs import build, check

G = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=G).to(dtype)


def gathers(program) -> int:
    return program.compiled.lib.optimized_ir.count("llvm.masked.gather")


@pytest.mark.parametrize("shape", [(64, 96), (33, 17), (16, 16), (1, 40), (40, 1), (100, 37), (47, 200)])
def test_transposed_copies_and_pointwise_match_eager(shape):
    x = randn(*shape)
    program = check(lambda x: x.t().contiguous(), x, cache=False)
    assert torch.equal(program([x])[0], x.t().contiguous())
    check(lambda x: x.t() * 2 + 1, x)
    check(lambda x, y: (x.t() + y).relu(), x, randn(*shape[::-1]))  # one transposed read, one plain


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool])
def test_every_dtype(dtype):
    x = randn(48, 80, dtype=dtype)
    program, _ = build(lambda x: x.t().contiguous(), x, cache=False)
    assert torch.equal(program([x])[0], x.t().contiguous())


def test_batched_transposes_match_eager():
    check(lambda x: x.transpose(-1, -2).contiguous(), randn(4, 3, 40, 24))  # k^T of attention's heads
    check(lambda x: x.transpose(1, 2) * 0.5, randn(3, 32, 48))


def test_runtime_sizes_match_eager():
    check(lambda x: x.t() * 3, randn(40, 50), dynamic=True, more=[(randn(17, 64),), (randn(64, 33),), (randn(1, 5),)])


def test_whole_blocks_are_shuffled_not_gathered():
    """64 x 96 is whole 16 x 64 tiles (and a 16 x 32 remainder) of whole 16 x 16 (or 8 x 8) blocks: no gather is left in the optimized code, where
    each vector of the transposed read was one."""
    program, _ = build(lambda x: x.t() * 2 + 1, randn(64, 96), cache=False)
    text = program.compiled.lib.optimized_ir
    assert gathers(program) == 0 and "shufflevector" in text
