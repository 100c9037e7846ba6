"""aten.scatter of one value at one position per row (nll_loss's gradient, `zeros.scatter(1, target, -1.0)`, in every
cross-entropy backward) imports as a select, where(iota == index, value, x): generated code that fuses with its
neighbours, where tn.scatter has no loop form and ran on the reference evaluator. Eager's numbers bit for bit and
eager's error for an index out of range; any other scatter stays tn.scatter."""

import pytest
import torch
import torch.nn.functional as F

from irc import report
from tests.conftest import compile_irc


def _reference_steps(start) -> list:
    return [f for g in report.reports_since(start).graphs for f in g.target_fallbacks]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_one_value_per_row_is_generated_code_with_eager_bits(dtype, dim):
    x = torch.randn(6, 5, 4).to(dtype)
    shape = [6, 5, 4]
    shape[dim] = 1
    index = torch.randint(0, x.shape[dim], shape, generator=torch.Generator().manual_seed(0))

    def f(x, i):
        return x.scatter(dim, i, -1.5) * 2

    start = report.mark()
    got = compile_irc(f, cache=False)(x, index)
    assert torch.equal(got, f(x, index))
    assert _reference_steps(start) == []
    assert not any(p.startswith("tn.scatter") for g in report.reports_since(start).graphs for p in g.extern_paths)


def test_an_index_out_of_range_raises_eagers_error():
    x, index = torch.randn(4, 5), torch.tensor([[1], [5], [0], [2]])
    with pytest.raises(RuntimeError) as eager:
        x.scatter(1, index, 1.0)
    compiled = compile_irc(lambda x, i: x.scatter(1, i, 1.0), cache=False)
    compiled(x, torch.tensor([[1], [4], [0], [2]]))
    with pytest.raises(RuntimeError) as got:
        compiled(x, index)
    assert str(got.value) == str(eager.value)
    with pytest.raises(RuntimeError):
        compiled(x, torch.tensor([[1], [-1], [0], [2]]))  # eager's scatter does not wrap


def test_several_positions_per_row_stay_a_scatter():
    x, index = torch.randn(3, 6), torch.tensor([[0, 2], [5, 5], [1, 3]])
    got = compile_irc(lambda x, i: x.scatter(1, i, 7.0), cache=False)(x, index)
    assert torch.equal(got, x.scatter(1, index, 7.0))


def test_cross_entropy_backward_runs_no_step_on_the_reference():
    torch.manual_seed(0)
    w = torch.randn(10, 16, requires_grad=True)
    x, target = torch.randn(8, 16), torch.randint(0, 10, (8,))
    start = report.mark()
    compile_irc(lambda x: F.cross_entropy(x @ w.t(), target), cache=False)(x).backward()
    got = w.grad.clone()
    w.grad = None
    F.cross_entropy(x @ w.t(), target).backward()
    torch.testing.assert_close(got, w.grad, rtol=1e-5, atol=1e-6)
    assert _reference_steps(start) == []
