"""A compiled gather never reads outside its tensor: an index out of bounds raises eager's error (type and message),
on every target, in every mode, with static and dynamic shapes, forward and in training; negative indices wrap where
eager wraps them, and in-bounds indices give eager's numbers. (lowering/lower_nn.py puts a tn.check_index before
each load through an index tensor; dialects/semantics/bounds.py gives it its meaning.)"""

import os

import pytest
import torch

import irc
from tests.conftest import compile_irc

if not torch.cuda.is_available():  # as tests/triton/conftest.py: before Triton is first imported
    os.environ.setdefault("TRITON_INTERPRET", "1")

TARGETS = ["cpu", "triton", "reference"]


def eager_error(fn, *args) -> Exception:
    with pytest.raises(Exception) as caught:
        fn(*args)
    return caught.value


def assert_raises_like_eager(compiled, fn, *args):
    want = eager_error(fn, *args)
    with pytest.raises(type(want)) as got:
        compiled(*args)
    assert type(got.value) is type(want) and str(got.value) == str(want)


def row_sum(w, i):
    return (w[i] * 2).sum(0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bad", [[1, 12], [-11, 0], [10**9, 0]], ids=["past-end", "below-minus-size", "huge"])
def test_advanced_indexing_out_of_bounds_raises_eagers_index_error(target, bad):
    w = torch.randn(10, 4)
    compiled = compile_irc(row_sum, target=target)
    torch.testing.assert_close(compiled(w, torch.tensor([1, 3])), row_sum(w, torch.tensor([1, 3])))
    assert_raises_like_eager(compiled, row_sum, w, torch.tensor(bad))


@pytest.mark.parametrize("target", TARGETS)
def test_negative_indices_wrap_as_in_eager(target):
    w, i = torch.randn(10, 4), torch.tensor([-1, -10, 3, 0])
    torch.testing.assert_close(compile_irc(row_sum, target=target)(w, i), row_sum(w, i))


def test_the_check_is_compiled_not_an_eager_fallback():
    w, i = torch.randn(10, 4), torch.tensor([1, 3])
    rep = irc.explain(row_sum, w, i, options={"strict": True})
    assert rep.native and not [g.target_fallbacks for g in rep.graphs if g.target_fallbacks], str(rep)


def test_index_along_a_later_dim_and_two_index_tensors_name_eagers_dimension():
    x = torch.randn(5, 4, 6)
    cols = lambda x, i: x[:, i] + 1  # noqa: E731
    pair = lambda x, i, j: x[i, :, j] * 2  # noqa: E731
    assert_raises_like_eager(compile_irc(cols), cols, x, torch.tensor([1, -5]))
    assert_raises_like_eager(compile_irc(pair), pair, x, torch.tensor([0, 4]), torch.tensor([2, 6]))
    torch.testing.assert_close(
        compile_irc(pair)(x, torch.tensor([0, -5]), torch.tensor([5, -6])),
        pair(x, torch.tensor([0, -5]), torch.tensor([5, -6])),
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_embedding_out_of_range_raises_eagers_index_error(target, dtype):
    emb = torch.nn.Embedding(10, 4)
    compiled = compile_irc(emb, target=target)
    with torch.no_grad():
        ok = torch.tensor([[0, 9], [3, 3]], dtype=dtype)
        torch.testing.assert_close(compiled(ok), emb(ok))
        for bad in ([99], [-1], [2, 10]):
            assert_raises_like_eager(compiled, emb, torch.tensor(bad, dtype=dtype))


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_gather_and_index_select_out_of_bounds_raise_eagers_errors(target):
    x = torch.randn(3, 5)
    gather = lambda x, i: torch.gather(x, 1, i) * 2  # noqa: E731
    select = lambda x, i: torch.index_select(x, 1, i) + 1  # noqa: E731
    cg, cs = compile_irc(gather, target=target), compile_irc(select, target=target)
    good = torch.tensor([[0, 4], [1, 1], [2, 3]])
    torch.testing.assert_close(cg(x, good), gather(x, good))
    assert_raises_like_eager(cg, gather, x, torch.tensor([[0, 4], [1, 5], [2, 3]]))  # RuntimeError in eager
    assert_raises_like_eager(cg, gather, x, torch.tensor([[0, 4], [1, -1], [2, 3]]))
    torch.testing.assert_close(cs(x, torch.tensor([4, 0])), select(x, torch.tensor([4, 0])))
    assert_raises_like_eager(cs, select, x, torch.tensor([4, 5]))  # along dim 1 eager's RuntimeError has its own text
    assert_raises_like_eager(cs, select, x, torch.tensor([-1]))
    rows = lambda x, i: torch.index_select(x, 0, i) + 1  # noqa: E731
    assert_raises_like_eager(compile_irc(rows, target=target), rows, x, torch.tensor([0, 3]))  # IndexError


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_training_checks_the_forward_and_backward_stays_right(target):
    """Embedding backward and gather backward: the forward graph of a training step raises before any backward runs;
    with good indices both gradients are eager's."""
    emb = torch.nn.Embedding(10, 4)
    x = torch.randn(3, 5, requires_grad=True)
    step = lambda i, j: emb(i).sum() + (torch.gather(x, 1, j) ** 2).sum()  # noqa: E731
    compiled = compile_irc(step, target=target)
    i, j = torch.tensor([[1, 9], [9, 0]]), torch.tensor([[0, 4], [4, 4], [2, 1]])
    compiled(i, j).backward()
    got = emb.weight.grad.clone(), x.grad.clone()
    emb.weight.grad, x.grad = None, None
    step(i, j).backward()
    torch.testing.assert_close(got, (emb.weight.grad, x.grad))
    assert_raises_like_eager(compiled, step, torch.tensor([[1, 99], [9, 0]]), j)
    assert_raises_like_eager(compiled, step, i, torch.tensor([[0, 4], [4, 5], [2, 1]]))


@pytest.mark.parametrize("target", ["cpu", "triton"])
def test_dynamic_shapes_check_against_the_size_of_each_call(target):
    compiled = compile_irc(row_sum, dynamic=True, target=target)
    for rows in (10, 17):
        w = torch.randn(rows, 4)
        for i in ([rows - 1, 0, -rows], [1, 2, 3, 4, 5]):
            torch.testing.assert_close(compiled(w, torch.tensor(i)), row_sum(w, torch.tensor(i)))
        assert_raises_like_eager(compiled, row_sum, w, torch.tensor([0, rows]))
        assert_raises_like_eager(compiled, row_sum, w, torch.tensor([-rows - 1, 0, 1]))


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_cpu_launcher_modes_check_too(mode):
    emb = torch.nn.Embedding(10, 4)
    fn = lambda i: emb(i) * 2 + 1  # noqa: E731
    compiled = compile_irc(fn, mode=mode)
    with torch.no_grad():
        i = torch.tensor([[0, 9, 4]])
        torch.testing.assert_close(compiled(i), fn(i))
        assert_raises_like_eager(compiled, fn, torch.tensor([[0, 10, 4]]))
        torch.testing.assert_close(compiled(i), fn(i))  # the error left nothing behind
