"""Selects whose condition is one value for the whole vector branch to the arm they pick (targets/cpu/codegen/branches.py).

A cat, and the zero-padded pieces a stack's backward sums (q, k and v's gradients back into a fused in-projection),
read each element from one source, chosen by the piece it lies in. The mini-transformer's training step computed
that in-projection bias gradient from all three sources, one of them a gather: 1.9 ms a call, 0.65 ms branching."""

import pytest
import torch

from irc.targets.cpu.codegen import body
from tests.cpu.programs import build, check
from tests.cpu.test_head_views import in_proj_bias_grad

G = torch.Generator().manual_seed(0)
SUM = {"rtol": 1e-4, "atol": 1e-4}


def randn(*shape):
    return torch.randn(*shape, generator=G)


@pytest.fixture
def branched(monkeypatch):
    """Per select the kernels emit through `branch`: True where it branched (a condition with no lanes)."""
    seen = []
    branch = body.Body.branch

    def spy(self, b, s, ops, dims, local, width):
        seen.append(not getattr(local[s.cond].type, "count", None))
        return branch(self, b, s, ops, dims, local, width)

    monkeypatch.setattr(body.Body, "branch", spy)
    return seen


def cat_rows(a, b, c):  # pieces along the outer dim: the condition depends on the row only
    return torch.cat([a.exp(), b * 2, c.t()]) + 1


def cat_columns(a, b):  # pieces along the vector dim
    return torch.cat([a, b.tanh()], dim=1) * 3


@pytest.mark.parametrize("rows", [1, 5, 64])
def test_a_cat_along_rows_branches_and_matches(branched, rows):
    a, b, c = randn(rows, 48), randn(7, 48), randn(48, 3)
    program, consts = build(cat_rows, a, b, c, cache=False)
    torch.testing.assert_close(program([a, b, c, *consts])[0], cat_rows(a, b, c))
    assert branched and all(branched), branched


@pytest.mark.parametrize("left, right, aligned", [(64, 32, True), (17, 40, False), (3, 1, False)])
def test_a_cat_along_columns_branches_where_pieces_hold_whole_vectors(branched, left, right, aligned):
    """Pieces of 64 and 32 columns are whole vectors at every native width: one arm per vector. 17 columns split
    a vector between the pieces: the straight select, lane by lane, with the same numbers."""
    a, b = randn(9, left), randn(9, right)
    program, consts = build(cat_columns, a, b, cache=False)
    torch.testing.assert_close(program([a, b, *consts])[0], cat_columns(a, b))
    assert any(branched) == aligned, branched


@pytest.mark.parametrize("head", [32, 12])
def test_the_in_projection_bias_gradient_loads_one_source_per_vector(branched, head):
    q, k, v = (randn(16, 9, head) for _ in range(3))
    program, consts = build(in_proj_bias_grad, q, k, v, cache=False)
    torch.testing.assert_close(program([q, k, v, *consts])[0], in_proj_bias_grad(q, k, v), **SUM)
    assert any(branched) == (head == 32), branched  # 8 heads of 32: pieces of 256 columns


def test_dynamic_sizes_and_strided_inputs():
    check(
        cat_rows,
        randn(4, 48),
        randn(6, 48),
        randn(48, 5),
        dynamic=True,
        more=[(randn(9, 48), randn(2, 48), randn(48, 1))],
    )
    check(cat_columns, randn(64, 9).t(), randn(9, 32))


@pytest.mark.parametrize(
    "pick, whole",
    [
        (lambda i: i < 64, True),
        (lambda i: i <= 63, True),
        (lambda i: i > 31, True),
        (lambda i: i >= 32, True),
        (lambda i: i < 42, False),
        (lambda i: i <= 64, False),
        (lambda i: i > 33, False),  # inside a vector: lane by lane
    ],
)
def test_column_thresholds_on_either_side_of_a_vector(branched, pick, whole):
    """A threshold at a multiple of the width (16, 8 or 4 lanes) never splits an aligned vector: one arm per vector."""
    a, b = randn(5, 96), randn(5, 96)
    fn = lambda a, b: torch.where(pick(torch.arange(96)), a * 2, b.exp())  # noqa: E731
    program, consts = build(fn, a, b, cache=False)
    torch.testing.assert_close(program([a, b, *consts])[0], fn(a, b))
    assert any(branched) == whole, branched
