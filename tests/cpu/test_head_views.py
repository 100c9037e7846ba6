"""Views of attention heads, on the cpu target.

Reshapes of permuted heads feeding a batched matmul ((B, H, S, D)^T -> (B*H, D, S)) were copies made by an extern;
simplify-tensor now merges the dims on the permute's input (free) and leaves the permute a view the matmul reads
by its strides.

Views that split the vector dim: attention's heads (a (.., 8, 32) view of 256 columns), q/k/v stacked into
one in-projection (768 columns = 3 x 256). Their loads index the innermost dim through floordiv and mod; in a
vector that starts at a multiple of its width they still read whole vectors when the split's size is a multiple
of the width (affine.LaneCoefficient), and were gathers before: the in-projection bias gradient of
nn.MultiheadAttention's backward ran 4x slower than eager. Splits that are not multiples of the width (heads of
12 or 20, odd sizes, vector tails) keep their gathers and must give the same numbers."""

import pytest
import torch

from tests.cpu.programs import build, check

G = torch.Generator().manual_seed(0)
SUM = {"rtol": 1e-4, "atol": 1e-4}  # sums over thousands of rows, added in another order than eager's


def randn(*shape):
    return torch.randn(*shape, generator=G)


def merge_heads(x):  # (B, H, S, D) -> (B, S, H*D), as every attention's output projection reads it
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d) + 1.0


def split_heads(x, heads: int):  # (B, S, H*D) -> (B, H, S, D)
    b, s, e = x.shape
    return (x * 2.0).view(b, s, heads, e // heads).transpose(1, 2).contiguous()


def in_proj_bias_grad(q, k, v):
    """The bias gradient of a fused q/k/v projection: per-head gradients stacked, permuted back to (rows, 3E), summed."""
    bh, s, d = q.shape
    stacked = torch.stack([q, k * 0.5, v]).view(3, bh // 8, 8, s, d).permute(3, 1, 0, 2, 4)
    return stacked.reshape(s * (bh // 8), 3 * 8 * d).sum(0)


def gathers(program) -> int:
    return program.compiled.lib.optimized_ir.count("llvm.masked.gather")


@pytest.mark.parametrize("head", [32, 16, 12, 20, 1, 33])
def test_merge_and_split_heads(head):
    check(merge_heads, randn(3, 8, 7, head))
    check(lambda x: split_heads(x, 8), randn(3, 7, 8 * head))


@pytest.mark.parametrize("head", [32, 12, 5])
def test_in_projection_bias_gradient(head):
    q, k, v = (randn(16, 9, head) for _ in range(3))
    program, consts = build(in_proj_bias_grad, q, k, v)
    torch.testing.assert_close(program([q, k, v, *consts])[0], in_proj_bias_grad(q, k, v), **SUM)


def test_splits_of_a_reduced_row_and_of_non_contiguous_inputs():
    """Mode A (the split dim is the one reduced: a row sum over heads) and an input that is itself a strided view."""
    x = randn(4, 6, 8, 32)
    program, consts = build(lambda x: x.transpose(1, 2).reshape(4, 8, 192).sum(-1), x)
    torch.testing.assert_close(program([x, *consts])[0], x.transpose(1, 2).reshape(4, 8, 192).sum(-1), **SUM)
    check(merge_heads, randn(3, 7, 8, 32).transpose(1, 2))


def test_dynamic_sizes_keep_the_split():
    check(merge_heads, randn(2, 8, 5, 32), dynamic=True, more=[(randn(3, 8, 11, 32),)])
    check(lambda x: split_heads(x, 4), randn(2, 5, 128), dynamic=True, more=[(randn(1, 9, 128),)])


def test_splits_by_multiples_of_the_width_read_whole_vectors():
    """Heads of 32 columns and q/k/v pieces of 256 are multiples of every native float32 width (4, 8 or 16 lanes): no gather
    left (each was one before), also where a column sum would otherwise run 4 native vectors wide."""
    for fn, inputs in [
        (merge_heads, [randn(2, 8, 16, 32)]),
        (lambda x: split_heads(x, 8), [randn(2, 16, 256)]),
        (in_proj_bias_grad, [randn(16, 16, 32) for _ in range(3)]),
    ]:
        program, _ = build(fn, *inputs, cache=False)
        assert gathers(program) == 0, fn
    program, _ = build(lambda x: merge_heads(x) * 3, randn(2, 8, 16, 12), cache=False)
    assert gathers(program) > 0  # 12 columns per head cross vectors: still gathers, and still right (above)


def scores_backward(x, y):
    """(B, H, S, S) scores transposed and merged over B*H into a bmm, as attention's backward does."""
    return torch.bmm(x.transpose(2, 3).reshape(-1, x.shape[3], x.shape[2]), y)


def query_heads(x, y):
    """nn.MultiheadAttention's q: (S, B, H*D) split into heads, to (B*H, S, D), into a bmm."""
    s, b, e = x.shape
    return torch.bmm(x.view(s, b, 4, e // 4).permute(1, 2, 0, 3).reshape(b * 4, s, e // 4), y)


def copies(program, inputs, consts) -> list[str]:
    with torch.no_grad():
        return [name for name, _ in program.profile([*inputs, *consts], reps=1) if name == "extern tn.reshape"]


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (scores_backward, [(2, 4, 9, 7), (8, 9, 5)]),
        (scores_backward, [(1, 3, 16, 16), (3, 16, 4)]),  # batch 1
        (query_heads, [(9, 3, 32), (12, 8, 5)]),
    ],
)
def test_merged_heads_reach_the_matmul_as_views(fn, shapes):
    inputs = [randn(*s) for s in shapes]
    program, consts = build(fn, *inputs)
    torch.testing.assert_close(program([*inputs, *consts])[0], fn(*inputs), rtol=1e-5, atol=1e-5)
    assert copies(program, inputs, consts) == []


def test_merges_that_move_data_still_copy_and_match():
    """Merging dims the permute swapped cannot be a view of the input: the copy stays, with eager's numbers."""
    x, y = randn(4, 6, 5), randn(4, 30, 3)
    fn = lambda x, y: x.permute(0, 2, 1).reshape(4, 1, 30).bmm(y)  # noqa: E731
    program, consts = build(fn, x, y)
    torch.testing.assert_close(program([x, y, *consts])[0], fn(x, y), rtol=1e-5, atol=1e-5)
