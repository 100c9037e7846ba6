"""Per-op numerics of the linalg, nn, norm and indexing translations against eager: forward and input gradients,
contiguous and transposed inputs, odd sizes, dynamic batch; every compiled graph must be native."""

import pytest
import torch
import torch.nn.functional as F

from irc import report
from tests.conftest import compile_irc
from tests.numeric.nn_check import check, leaf

TOL = dict(atol=1e-4, rtol=1e-4)  # decomposed backward formulas (norms, softmax) sum in another order than eager


# ---- matrix products -------------------------------------------------------------------------------


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 13, 5), (16, 3, 1)])
@pytest.mark.parametrize("transposed", [False, True])
def test_mm(m, k, n, transposed):
    check(torch.mm, leaf(m, k, transposed=transposed), leaf(k, n, seed=1))


def test_linear_is_addmm_with_grads():
    check(F.linear, leaf(5, 11), leaf(3, 11, seed=1), leaf(3, seed=2))


def test_addmm_scales():
    fn = lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=-2.0)  # noqa: E731
    check(fn, leaf(1, 5), leaf(4, 3, transposed=True, seed=1), leaf(3, 5, seed=2))
    check(lambda b, x, y: torch.addmm(b, x, y, beta=0), torch.full((4, 5), float("nan")), leaf(4, 3), leaf(3, 5))


@pytest.mark.parametrize("transposed", [False, True])
def test_bmm_and_baddbmm(transposed):
    check(torch.bmm, leaf(3, 5, 7, transposed=transposed), leaf(3, 7, 2, seed=1))
    check(lambda b, x, y: torch.baddbmm(b, x, y, alpha=0.5), leaf(1, 5, 2), leaf(3, 5, 7), leaf(3, 7, 2, seed=1))


def test_matmul_broadcast_batch():
    check(torch.matmul, leaf(2, 3, 4, 5), leaf(5, 6, seed=1))


# ---- convolution ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        dict(padding=1),
        dict(stride=2, padding=0, dilation=2),
        dict(stride=(2, 1), padding=(1, 2), groups=2),
        dict(padding="same", dilation=2),
    ],
)
def test_conv2d(kw):
    groups = kw.get("groups", 1)
    check(
        lambda x, w, b: F.conv2d(x, w, b, **kw), leaf(2, 4, 9, 7), leaf(6, 4 // groups, 3, 3, seed=1), leaf(6, seed=2)
    )


def test_conv2d_without_bias_on_channels_last_input():
    x = leaf(2, 3, 5, 5, grad=False).contiguous(memory_format=torch.channels_last).requires_grad_()
    check(lambda x, w: F.conv2d(x, w, stride=2), x, leaf(4, 3, 1, 1, seed=1))


def test_conv1d_and_conv3d():
    check(
        lambda x, w, b: F.conv1d(x, w, b, padding=2, dilation=2), leaf(1, 3, 11), leaf(5, 3, 3, seed=1), leaf(5, seed=2)
    )
    check(lambda x, w: F.conv3d(x, w, stride=2, padding=1), leaf(1, 2, 5, 5, 5), leaf(3, 2, 3, 3, 3, seed=1))


@pytest.mark.parametrize("kw", [dict(stride=2, output_padding=1), dict(stride=1, padding=1, groups=2, dilation=2)])
def test_conv_transpose2d(kw):
    check(
        lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
        leaf(2, 4, 5, 3),
        leaf(4, 3, 3, 3, seed=1),
        leaf(3 * kw.get("groups", 1), seed=2),
    )


def test_conv_weight_grad_only():
    x = leaf(2, 3, 6, 6, grad=False)
    check(lambda x, w: F.conv2d(x, w), x, leaf(4, 3, 3, 3, seed=1))


# ---- pooling -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
        dict(kernel_size=2, dilation=2, stride=1),
    ],
)
def test_max_pool2d(kw):
    check(lambda x: F.max_pool2d(x, **kw), leaf(2, 3, 7, 9))


def test_max_pool2d_with_indices_unbatched_transposed():
    check(lambda x: F.max_pool2d(x, 3, 2, return_indices=True), leaf(3, 11, 5, transposed=True))


@pytest.mark.parametrize("indices", [False, True])
def test_max_pool_of_a_relu_keeps_nans_infinities_and_first_maxima(indices):
    """Inference pools the relu's input and relus the pool (simplify-tensor) unless the indices are read: windows
    with a NaN, -inf, only negatives or -0, whole or cut by the padding, channels-last; eager's values and indices."""
    x = torch.randn(2, 5, 9, 11)
    x[0, 0, 0, :3] = float("nan")
    x[0, 1] = -torch.rand(9, 11) - 0.5  # a plane of negatives: every window's relu ties at 0
    x[0, 2, 4, 4] = float("-inf")
    x[1, 3, :, :] = -0.0
    x[1, 4, 8, 10] = float("inf")
    x = x.contiguous(memory_format=torch.channels_last)
    fn = lambda t: F.max_pool2d(torch.relu(t), 3, 2, 1, return_indices=indices)  # noqa: E731
    start = report.mark()
    out, ref = compile_irc(fn)(x), fn(x)
    torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)
    assert all(g.native for g in report.reports_since(start).graphs)


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, divisor_override=5),
    ],
)
def test_avg_pool2d(kw):
    check(lambda x: F.avg_pool2d(x, **kw), leaf(2, 3, 7, 8))


@pytest.mark.parametrize("size", [(1, 1), (3, 2), (7, 5)])
def test_adaptive_avg_pool2d(size):
    check(lambda x: F.adaptive_avg_pool2d(x, size), leaf(2, 3, 7, 5))
    check(lambda x: F.adaptive_avg_pool2d(x, size), leaf(3, 7, 5, transposed=True))


# ---- normalisation and softmax -------------------------------------------------------------------


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine):
    w, b = (leaf(5, 7, seed=1), leaf(5, 7, seed=2)) if affine else (None, None)
    check(lambda x, w, b: F.layer_norm(x, (5, 7), w, b, eps=1e-3), leaf(3, 5, 7), w, b, tol=TOL)
    check(lambda x: F.layer_norm(x, (1,)), leaf(4, 1))


def test_batch_norm_inference():
    rm, rv = leaf(3, grad=False), leaf(3, grad=False).abs() + 0.5
    fn = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)  # noqa: E731
    check(fn, leaf(2, 3, 4, 5, transposed=True), leaf(3, seed=1), leaf(3, seed=2))


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 4)])
def test_batch_norm_training_updates_running_stats(shape):
    fn = lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2)  # noqa: E731
    _, ours, theirs = check(fn, leaf(*shape), leaf(3, seed=1), leaf(3, seed=2), torch.zeros(3), torch.ones(3), tol=TOL)
    torch.testing.assert_close(ours[3:], theirs[3:])
    assert not torch.equal(ours[3], torch.zeros(3))


def test_batch_norm_without_running_stats():
    check(lambda x: F.batch_norm(x, None, None, training=True), leaf(4, 3, 2), tol=TOL)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax(fn, dim):
    check(lambda x: fn(x, dim), leaf(3, 1, 7, transposed=True), tol=TOL)


# ---- indexing ------------------------------------------------------------------------------------


def test_embedding_with_padding_idx():
    ids = torch.tensor([[0, 3, 3, 9], [1, 0, 2, 3]])
    check(lambda w, i: F.embedding(i, w, padding_idx=0), leaf(10, 5), ids)
    check(lambda w, i: F.embedding(i, w, scale_grad_by_freq=True), leaf(10, 5), ids)


def test_index_select_and_gather():
    idx = torch.tensor([4, 0, 4])
    check(lambda x, i: torch.index_select(x, 1, i), leaf(3, 5, 2, transposed=True), idx)
    g = torch.tensor([[[0], [2]], [[1], [1]]])
    check(lambda x, i: torch.gather(x, 1, i), leaf(2, 3, 4), g)


@pytest.mark.parametrize("where", ["first", "middle", "split"])
def test_index(where):
    i, j = torch.tensor([0, 2, 2]), torch.tensor([[1], [0]])
    fn = {
        "first": lambda x, i, j: x[i],
        "middle": lambda x, i, j: x[:, i, j],
        "split": lambda x, i, j: x[j, :, i],
    }[where]
    check(fn, leaf(3, 4, 5, transposed=True), i, j)


def test_scatter_family():
    idx = torch.tensor([[0, 2, 2], [1, 1, 0]])
    x, src = leaf(2, 4), leaf(2, 3, seed=1)
    check(lambda x, i, s: torch.scatter(x, 1, i, s), x, torch.tensor([[0, 2, 1], [1, 3, 0]]), src)
    check(lambda x, i: torch.scatter(x, 1, i, 2.5), x, idx)
    check(lambda x, i, s: torch.scatter_add(x, 1, i, s), x, idx, src)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            fn = lambda x, i, s: torch.scatter_reduce(x, 1, i, s, reduce, include_self=include_self)  # noqa: E731
            check(fn, x.detach(), idx, src.detach())


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    i = torch.tensor([3, 0, 3] if accumulate else [3, 0, 1])
    index_put = torch.ops.aten.index_put.default  # the Python binding takes no None among the indices
    check(lambda x, v, i: index_put(x, [None, i], v, accumulate), leaf(2, 4, 3), leaf(2, 3, 3, seed=1), i)
    check(lambda x, i: torch.index_put(x, (i,), torch.tensor(1.5), accumulate=accumulate), leaf(4, 2), i)


def test_index_put_through_boolean_mask():
    index_put = torch.ops.aten.index_put.default
    m2, m1 = torch.tensor([[True, False, True], [False, False, True]]), torch.tensor([False, True, True, False])
    check(lambda x, m: index_put(x, [m], torch.tensor(0.5), False), leaf(2, 3, 5), m2)
    check(lambda x, m, v: index_put(x, [None, m], v, True), leaf(2, 4, 3), m1, leaf(2, 1, 3, seed=1, grad=False))


def test_select_and_slice_scatter():
    check(lambda x, s: torch.select_scatter(x, s, 1, -1), leaf(3, 4, 2), leaf(3, 2, seed=1))
    check(lambda x, s: torch.slice_scatter(x, s, 0, 1, None, 2), leaf(5, 3, transposed=True), leaf(2, 3, seed=1))


def test_masked_fill_and_dropout_in_eval_are_native():
    mask = torch.tensor([[True, False, False], [False, True, False]])
    check(lambda x, m: F.dropout(x.masked_fill(m, float("-inf")).softmax(-1), 0.5, training=False), leaf(2, 3), mask)


def test_dropout_in_training_keeps_or_scales():
    x = torch.randn(64, 64).abs() + 1
    out = compile_irc(lambda x: F.dropout(x, 0.25, training=True))(x)
    kept = out != 0
    torch.testing.assert_close(out[kept], x[kept] / 0.75)
    assert 0.6 < kept.float().mean() < 0.9


# ---- dynamic batch -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,make",
    [
        (lambda x, w, b: F.relu(F.linear(x, w, b)), lambda n: (leaf(n, 6), leaf(4, 6, seed=1), leaf(4, seed=2))),
        (
            lambda x, w: F.max_pool2d(F.conv2d(x, w, padding=1), 2),
            lambda n: (leaf(n, 2, 6, 6), leaf(3, 2, 3, 3, seed=1)),
        ),
        (lambda x: F.log_softmax(F.layer_norm(x, (5,)), -1), lambda n: (leaf(n, 3, 5),)),
        (lambda x, y: torch.bmm(x, y).softmax(1), lambda n: (leaf(n, 3, 4), leaf(n, 4, 2, seed=1))),
        (lambda w, i: F.embedding(i, w).sum(1), lambda n: (leaf(10, 4), torch.arange(3 * n).view(n, 3) % 10)),
        (lambda x: F.adaptive_avg_pool2d(F.avg_pool2d(x, 2), 1), lambda n: (leaf(n, 3, 6, 6),)),
    ],
)
def test_dynamic_batch(fn, make):
    compiled = None
    for n in (2, 5, 3):
        compiled, _, _ = check(fn, *make(n), compiled=compiled, dynamic=True, tol=TOL)


@pytest.mark.parametrize(
    "x,dim,index",
    [
        (torch.randn(3, 4), 1, torch.zeros(0, dtype=torch.long)),
        (torch.tensor(2.5), 0, torch.zeros(1, dtype=torch.long)),
    ],
    ids=["empty-index", "0d-input"],
)
def test_gather_with_index_of_another_rank_matches_eager(x, dim, index):
    """torch accepts these rank mismatches; tn.gather does not, so they run eagerly (OpInfo sweep errors)."""
    fn = lambda x, i: torch.gather(x, dim, i)  # noqa: E731
    torch.testing.assert_close(compile_irc(fn)(x, index), fn(x, index))
