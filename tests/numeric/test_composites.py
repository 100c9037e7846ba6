"""index_reduce, put, take, masked_scatter, histc, as_strided_scatter and nonzero_static compile natively
(frontend/composites_indexing.py), as do cdist and pdist (composites_distance.py) and segment_reduce
(composites_segment.py), and give eager's answers:
exactly where eager is exact (placement, max/min, counts), the same reduction semantics (include_self, mean's count,
integer floor division), duplicate and negative indices, odd sizes, non-contiguous and dynamic inputs, eager's error
for an index out of range, and eager's gradients."""

import pytest
import torch

import irc
from tests.conftest import compile_irc


def same(fn, *args, dynamic=None, exact=True):
    got, want = compile_irc(fn, dynamic=dynamic)(*args), fn(*args)
    if exact:
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, equal_nan=True)


def raises_like_eager(fn, *args):
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(type(want.value)) as got:
        compile_irc(fn)(*args)
    assert str(got.value) == str(want.value)


def grads_equal(fn, *inputs):
    """fn's gradients for the float inputs, compiled and eager."""
    a = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    b = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    compile_irc(fn)(*a).sum().backward()
    fn(*b).sum().backward()
    for x, y in zip(a, b):
        if x.requires_grad:
            torch.testing.assert_close(x.grad, y.grad)


def native(fn, *args):
    rep = irc.explain(fn, *args, options={"strict": True})
    assert rep.native and not [f for g in rep.graphs for f in g.fallbacks], str(rep)


# -- index_reduce ----------------------------------------------------------------------------------------------------

REDUCES = ["prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
def test_index_reduce_dtypes_duplicates_and_include_self(reduce, include_self, dtype):
    torch.manual_seed(0)
    x = torch.randint(-4, 5, (7, 3)).to(dtype) if not dtype.is_floating_point else torch.randn(7, 3, dtype=dtype)
    src = torch.randint(-4, 5, (5, 3)).to(dtype) if not dtype.is_floating_point else torch.randn(5, 3, dtype=dtype)
    index = torch.tensor([2, 0, 2, 6, 2])  # duplicates; rows 1, 3, 4, 5 untouched
    fn = lambda x, i, s: x.index_reduce(0, i, s, reduce, include_self=include_self)  # noqa: E731
    same(fn, x, index, src, exact=reduce in ("amax", "amin") or not dtype.is_floating_point)


@pytest.mark.parametrize("reduce", REDUCES)
def test_index_reduce_later_dim_odd_sizes_non_contiguous(reduce):
    torch.manual_seed(1)
    x = torch.randn(3, 11, 5).transpose(0, 2)  # (5, 11, 3), non-contiguous
    src = torch.randn(5, 13, 3)[:, ::1].transpose(0, 1).transpose(0, 1)
    index = torch.randint(0, 11, (13,), dtype=torch.int32)
    for dim, s in ((1, src), (0, torch.randn(1, 11, 3)), (-1, torch.randn(5, 11, 2))):
        i = index if dim == 1 else torch.tensor([4]) if dim == 0 else torch.tensor([2, 2])
        same(lambda x, i, s: x.index_reduce(dim, i, s, reduce), x, i, s, exact=False)


def test_index_reduce_out_of_range_and_negative_index_raise_eagers_error():
    x, src = torch.randn(5, 3), torch.randn(2, 3)
    fn = lambda x, i, s: x.index_reduce(0, i, s, "amax")  # noqa: E731
    raises_like_eager(fn, x, torch.tensor([1, 5]), src)
    raises_like_eager(fn, x, torch.tensor([1, -1]), src)  # eager allows no negative index here


@pytest.mark.parametrize("reduce", REDUCES)
def test_index_reduce_dynamic_sizes(reduce):
    fn = lambda x, i, s: x.index_reduce(0, i, s, reduce, include_self=False)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n, k in ((7, 4), (13, 9)):
        x, s, i = torch.randn(n, 3), torch.randn(k, 3), torch.randint(0, n, (k,))
        torch.testing.assert_close(compiled(x, i, s), fn(x, i, s))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax"])
def test_index_reduce_gradients(reduce):
    torch.manual_seed(2)
    grads_equal(
        lambda x, s, i: x.index_reduce(0, i, s, reduce),
        torch.randn(6, 4),
        torch.randn(5, 4),
        torch.tensor([1, 3, 1, 0, 5]),
    )


# -- put and take ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_put_negative_indices_and_accumulate(accumulate, dtype):
    x = torch.arange(35).to(dtype).reshape(5, 7).t()  # non-contiguous: put goes by the logical row-major order
    index = torch.tensor([[0, -1, 34], [-35, 11, 3]]) if not accumulate else torch.tensor([2, 2, -33, 0, 2, 7])
    src = (torch.arange(index.numel()) * 3 + 1).to(dtype).reshape(index.shape)
    same(lambda x, i, s: x.put(i, s, accumulate=accumulate), x, index, src)


def test_put_and_take_out_of_range_raise_eagers_error():
    x = torch.randn(3, 5)
    for bad in ([1, 15], [-16, 0]):
        raises_like_eager(lambda x, i, s: x.put(i, s), x, torch.tensor(bad), torch.randn(2))
        raises_like_eager(lambda x, i: x.take(i), x, torch.tensor(bad))


def test_put_and_take_dynamic_sizes():
    fn = lambda x, i, s: x.put(i, s, accumulate=True).take(i)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n in (7, 13):
        x, i, s = torch.randn(n, 2), torch.randint(-2 * n, 2 * n, (n,)), torch.randn(n)
        torch.testing.assert_close(compiled(x, i, s), fn(x, i, s))


def test_put_and_take_gradients():
    i = torch.tensor([[4, -1], [0, 9]])
    grads_equal(lambda x, s: x.put(i, s, accumulate=True).take(i.flip(0)) * 2, torch.randn(2, 5), torch.randn(2, 2))
    grads_equal(lambda x, s: x.put(i, s) * torch.arange(10.0).reshape(2, 5), torch.randn(2, 5), torch.randn(4))


# -- masked_scatter --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (7,), (5, 3), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_masked_scatter_takes_source_in_order(shape, dtype):
    torch.manual_seed(3)
    x = torch.randint(0, 2, shape).to(dtype)
    mask = torch.rand(shape) > 0.4
    src = torch.randint(0, 100, (torch.Size(shape).numel() + 2,)).to(dtype)
    same(lambda x, m, s: x.masked_scatter(m, s), x, mask, src)


def test_masked_scatter_broadcast_mask_non_contiguous_and_dynamic():
    x, mask, src = torch.randn(4, 6).t(), torch.tensor([True, False, True, True]), torch.randn(5, 6)
    same(lambda x, m, s: x.masked_scatter(m, s), x, mask, src)
    fn = lambda x, m, s: x.masked_scatter(m, s)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n in (7, 11):
        x, m, s = torch.randn(n, 3), torch.rand(n, 3) > 0.5, torch.randn(n, 3)
        assert torch.equal(compiled(x, m, s), fn(x, m, s))


def test_masked_scatter_short_source_raises_eagers_error():
    x = torch.randn(4, 3)
    raises_like_eager(lambda x, m, s: x.masked_scatter(m, s), x, torch.ones(4, 3, dtype=torch.bool), torch.randn(5))


def test_masked_scatter_gradients():
    mask = torch.tensor([[True, False, True], [False, True, True]])
    grads_equal(
        lambda x, s: x.masked_scatter(mask, s) * torch.arange(6.0).reshape(2, 3), torch.randn(2, 3), torch.randn(3, 3)
    )


# -- histc -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bins", [1, 2, 7, 10, 31])
def test_histc_edges_ties_and_the_max_in_the_last_bin(bins, dtype=torch.float32):
    torch.manual_seed(4)
    lo, hi = -1.3, 2.9
    edges = torch.linspace(lo, hi, bins + 1, dtype=dtype)
    up, down = torch.nextafter(edges, edges + 1), torch.nextafter(edges, edges - 1)
    x = torch.cat(
        [torch.rand(97, dtype=dtype) * 5 - 2, edges, up, down, torch.tensor([float("nan"), float("inf")], dtype=dtype)]
    )
    same(lambda x: torch.histc(x, bins, lo, hi), x)
    same(lambda x: torch.histc(x.reshape(-1, 3)[:, 1:], bins, min=0, max=1), x[: len(x) // 3 * 3])


def test_histc_dynamic_sizes():
    fn = lambda x: torch.histc(x, 6, -2, 2)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n in (7, 13):
        x = torch.randn(n)
        assert torch.equal(compiled(x), fn(x))


# -- as_strided_scatter ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, stride, offset",
    [
        ((2, 3), (1, 2), 0),
        ((3,), (5,), 1),
        ((2, 2, 2), (12, 1, 5), 1),
        ((1, 4), (100, 2), 2),
        ((), (), 7),
        ((0, 3), (1, 1), 0),
    ],
)
def test_as_strided_scatter(size, stride, offset):
    x, src = torch.randn(4, 5), torch.randn(size)
    same(lambda x, s: torch.as_strided_scatter(x, s, size, stride, offset), x, src)


def test_as_strided_scatter_gradients():
    grads_equal(
        lambda x, s: torch.as_strided_scatter(x, s, (2, 3), (1, 4), 1) * torch.arange(12.0).reshape(3, 4),
        torch.randn(3, 4),
        torch.randn(2, 3),
    )


# -- nonzero_static --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 3, 40])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool])
def test_nonzero_static_order_and_padding(size, dtype):
    torch.manual_seed(7)
    x = (torch.randn(5, 1, 7) * (torch.rand(5, 1, 7) > 0.5)).to(dtype)
    if dtype == torch.float32:
        x[0, 0, :3] = torch.tensor([-0.0, float("nan"), float("-inf")])  # -0.0 is a zero, NaN is not
    for t in (x, x.transpose(0, 2), x[0, 0], x[0, 0, 0], torch.zeros(3, 0)):
        same(lambda t: torch.nonzero_static(t, size=size, fill_value=-7), t)


def test_nonzero_static_dynamic_sizes():
    fn = lambda x: torch.nonzero_static(x, size=6)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n in (7, 13):
        x = torch.randint(0, 2, (n, 3))
        assert torch.equal(compiled(x), fn(x))


# -- segment_reduce (frontend/composites_segment.py) -----------------------------------------------------------------

SEGMENT_REDUCES = ["max", "mean", "min", "sum", "prod"]


@pytest.mark.parametrize("reduce", SEGMENT_REDUCES)
@pytest.mark.parametrize("initial", [None, 2])
@pytest.mark.parametrize("mode", ["lengths", "offsets"])
def test_segment_reduce(reduce, initial, mode):
    torch.manual_seed(8)
    cases = [
        (torch.randn(7), 0, torch.tensor([0, 2, 3, 0, 2])),  # empty segments
        (torch.randn(5, 3).t(), 1, torch.tensor([[2, 0, 3], [1, 1, 3], [0, 0, 5]])),  # rows of lengths
        (torch.randn(6, 2, 3), 0, torch.tensor([1, 5])),
    ]
    cases[0][0][3] = float("nan")
    for data, axis, lengths in cases:
        seg = (
            {"lengths": lengths}
            if mode == "lengths"
            else {"offsets": torch.cat([lengths.new_zeros(*lengths.shape[:-1], 1), lengths], -1).cumsum(-1)}
        )
        fn = lambda x, s: torch.segment_reduce(x, reduce, **{mode: s}, axis=axis, initial=initial)  # noqa: E731
        same(fn, data, seg[mode], exact=reduce in ("max", "min", "sum"))


@pytest.mark.parametrize("reduce", SEGMENT_REDUCES)
@pytest.mark.parametrize("initial", [None, 2])
def test_segment_reduce_gradients_ties_and_zeros(reduce, initial):
    data = torch.tensor(
        [[3.0, -1, 3, 0, 2, 0, 0.5, 4, 0, 1.5], [1, 1, -2, 5, 0, 7, 7, 2, 2, 2]]
    ).t()  # ties, one and two zeros
    lengths = torch.tensor([3, 2, 0, 3, 2])
    weights = torch.arange(10.0).reshape(5, 2) - 4  # negative and positive segment gradients
    grads_equal(lambda x: torch.segment_reduce(x, reduce, lengths=lengths, initial=initial) * weights, data)
    offsets = torch.tensor([[0, 4, 4, 10], [0, 1, 7, 10]])  # rows of offsets along axis 1
    grads_equal(lambda x: torch.segment_reduce(x, reduce, offsets=offsets, axis=1, initial=initial), data.t())


def test_segment_reduce_bad_lengths_raise_eagers_errors():
    fn = lambda x, n: torch.segment_reduce(x, "sum", lengths=n)  # noqa: E731
    raises_like_eager(fn, torch.randn(5), torch.tensor([3, -1, 3]))
    raises_like_eager(fn, torch.randn(5), torch.tensor([3, 1]))
    unsafe = lambda x, n: torch.segment_reduce(x, "sum", lengths=n, unsafe=True)  # noqa: E731
    raises_like_eager(unsafe, torch.randn(5), torch.tensor([3, -1, 3]))


def test_no_eager_fallback():
    x, i = torch.randn(6, 4), torch.tensor([1, 3, 1])
    native(
        lambda x, i: (
            x.index_reduce(0, i, x[:3] * 2, "prod", include_self=False),
            x.put(i, x[0, :3]),
            x.take(i),
            x.masked_scatter(x > 0, x * 3),
            torch.histc(x, 5, -1, 1),
            torch.as_strided_scatter(x, x[:2, :2], (2, 2), (1, 4), 0),
            torch.nonzero_static(x, size=5),
            torch.segment_reduce(x, "max", lengths=i, axis=0, unsafe=True),
        ),
        x,
        i,
    )


# -- cdist and pdist (frontend/composites_distance.py) ---------------------------------------------------------------

PS = [0, 0.5, 1, 1.5, 2, 3, float("inf")]


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("rows", [(1, 1), (5, 7), (26, 3)])  # 26 rows: eager's matmul path for p = 2
def test_cdist_norms_and_paths(p, rows):
    torch.manual_seed(5)
    a, b = torch.randn(2, rows[0], 5), torch.randn(rows[1], 5)  # broadcast batch
    b[0, :] = a[1, 0, :] if rows[0] > 1 else b[0, :]  # a zero distance
    same(lambda a, b: torch.cdist(a, b, p), a, b, exact=p in (0, float("inf")))
    grads_equal(lambda a, b: torch.cdist(a, b, p) * torch.arange(float(rows[1])), a, b)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_compute_modes_non_contiguous_and_dynamic(mode):
    fn = lambda a, b: torch.cdist(a, b, compute_mode=mode)  # noqa: E731
    same(fn, torch.randn(4, 7).t(), torch.randn(3, 4)[:, :4], exact=False)
    compiled = compile_irc(fn, dynamic=True)
    for n in (5, 31):
        a, b = torch.randn(n, 3), torch.randn(7, 3)
        torch.testing.assert_close(compiled(a, b), fn(a, b))


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("n", [1, 2, 7])
def test_pdist(p, n):
    torch.manual_seed(6)
    x = torch.randn(n, 4)
    if n > 2:
        x[2] = x[0]  # a zero distance: a zero gradient, as eager's
    same(lambda x: torch.nn.functional.pdist(x, p), x, exact=p in (0, float("inf")))
    grads_equal(lambda x: torch.nn.functional.pdist(x, p) * 3, x)


def test_pdist_dynamic_sizes():
    fn = lambda x: torch.nn.functional.pdist(x, 1.5)  # noqa: E731
    compiled = compile_irc(fn, dynamic=True)
    for n in (5, 11):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), fn(x))


def test_distances_have_no_eager_fallback():
    a, b = torch.randn(5, 3, requires_grad=True), torch.randn(30, 3)
    native(
        lambda a, b: torch.cdist(a, b) + torch.cdist(a, b[:4], 1).sum() + torch.nn.functional.pdist(a, 3).sum(), a, b
    )
