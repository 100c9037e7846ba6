"""Ops that irc has no importer for but decomposes (frontend/decompositions.py) compile with no eager fallback
and match eager, on odd sizes and non-contiguous inputs (issue 18.5)."""

import pytest
import torch
import torch.nn.functional as F

from irc import report


def _native_and_close(fn, *args):
    start = report.mark()
    got = torch.compile(fn, backend="irc", dynamic=False)(*args)
    graphs = report.reports_since(start).graphs
    assert graphs, "backend='irc' did not reach irc"
    fallbacks = [f for g in graphs for f in g.fallbacks]
    assert not fallbacks and all(g.native for g in graphs), f"eager fallbacks: {fallbacks}"
    torch.testing.assert_close(got, fn(*args))


def _strided(*shape):
    """A non-contiguous tensor of the shape: every other element along the last dim of a wider one."""
    return torch.randn(*shape[:-1], 2 * shape[-1])[..., ::2]


CASES = {
    "addbmm": (
        lambda s, a, b: torch.addbmm(s, a, b, beta=0.5, alpha=2.0),
        lambda: (torch.randn(7, 13), torch.randn(3, 7, 5), _strided(3, 5, 13)),
    ),
    "bilinear": (F.bilinear, lambda: (_strided(7, 5), torch.randn(7, 3), torch.randn(13, 5, 3), torch.randn(13))),
    "diagonal_scatter": (
        lambda x, s: torch.diagonal_scatter(x, s, 1, 0, 2),
        lambda: (_strided(7, 4, 13), torch.randn(4, 7)),
    ),
    "avg_pool3d": (
        lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        lambda: (_strided(2, 3, 7, 5, 13),),
    ),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (3, 2, 5)), lambda: (_strided(2, 7, 5, 13),)),
    "adaptive_max_pool2d": (
        lambda x: F.adaptive_max_pool2d(x, (3, 5), return_indices=True),
        lambda: (_strided(2, 3, 7, 13),),
    ),
    "group_norm": (
        lambda x, w, b: F.group_norm(x, 3, w, b),
        lambda: (_strided(2, 6, 7, 13), torch.randn(6), torch.randn(6)),
    ),
    "grid_sample": (
        lambda x, g: F.grid_sample(x, g, align_corners=False),
        lambda: (_strided(2, 3, 7, 13), torch.rand(2, 5, 7, 2) * 2 - 1),
    ),
    # max_norm renormalises the rows it reads in place: on a copy, so that eager and irc start from the same weight
    "embedding_max_norm": (
        lambda i, w: F.embedding(i, w.clone(), max_norm=1.0),
        lambda: (torch.tensor([[1, 3], [12, 3]]), (torch.randn(13, 14) * 3)[:, ::2]),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_decomposed_op_is_native(name):
    fn, make = CASES[name]
    torch.manual_seed(0)
    args = make()
    assert any(not a.is_contiguous() for a in args)
    _native_and_close(fn, *args)


def test_gather_between_0d_and_1d():
    """gather of a 0-d input by a 1-d index (the importer wants equal ranks): decomposed to 1-d, no fallback."""
    _native_and_close(lambda x, i: torch.gather(x, 0, i), torch.tensor(2.5), torch.tensor([0]))


def test_eval_batch_norm_functional():
    """batch norm's functional form with training=False, as the inference form irc imports."""
    bn = torch.nn.BatchNorm2d(5).eval()
    bn.running_mean.uniform_()
    bn.running_var.uniform_(0.5, 2.0)
    x = _strided(2, 5, 7, 13)
    _native_and_close(
        lambda x: torch.ops.aten._native_batch_norm_legit(
            x, bn.weight, bn.bias, bn.running_mean, bn.running_var, False, 0.1, 1e-5
        )[0],
        x,
    )


def test_the_table_is_built_once_per_process_and_each_caller_gets_its_own_copy(monkeypatch):
    from irc.frontend import decompositions

    first = decompositions.decomposition_table()
    monkeypatch.setattr(decompositions, "core_aten_decompositions", lambda: pytest.fail("the table was built again"))
    second = decompositions.decomposition_table()
    assert second == first and second is not first
    first.clear()  # a caller's changes stay its own
    assert decompositions.decomposition_table() == second
    assert torch.ops.aten.addbmm.default in second
