"""Ops AOT autograd orders with effect tokens (with_effects: linalg's checks that raise on a singular matrix) no
longer send the whole graph to eager: the op runs as an eager call in its place, the rest compiles, the token (None
at run time) passes through, and a singular matrix raises eager's error. Inference and training, every target."""

import os

import pytest
import torch

import irc
from tests.conftest import compile_irc

if not torch.cuda.is_available():  # as tests/triton/conftest.py: before Triton is first imported
    os.environ.setdefault("TRITON_INTERPRET", "1")


def solve_relu(a, b):
    return torch.linalg.solve(a, b).relu() * 2 + torch.linalg.inv(a).sum()


def matrices(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 4, 4, generator=g) + 4 * torch.eye(4), torch.randn(3, 4, 2, generator=g)


@pytest.mark.parametrize("target", ["cpu", "reference", "triton"])
def test_graph_compiles_around_the_effectful_op(target):
    a, b = matrices()
    torch.testing.assert_close(compile_irc(solve_relu, target=target)(a, b), solve_relu(a, b))
    rep = irc.explain(solve_relu, a, b, options={"strict": True, "target": target})
    (g,) = rep.graphs
    assert g.eager_graph is None and (g.kernels >= 1 or target == "reference"), str(rep)
    assert ("aten::_linalg_check_errors.default", "an op with side effects (with_effects)") in g.fallbacks


def test_a_singular_matrix_raises_eagers_error():
    a, b = matrices()
    a[1] = 0.0
    with pytest.raises(torch.linalg.LinAlgError) as want:
        solve_relu(a, b)
    with pytest.raises(torch.linalg.LinAlgError) as got:
        compile_irc(solve_relu)(a, b)
    assert str(got.value) == str(want.value)


def test_gradients_through_solve_equal_eagers():
    a, b = matrices(1)
    a1, b1 = a.clone().requires_grad_(), b.clone().requires_grad_()
    a2, b2 = a.clone().requires_grad_(), b.clone().requires_grad_()
    compile_irc(solve_relu)(a1, b1).pow(2).sum().backward()
    solve_relu(a2, b2).pow(2).sum().backward()
    torch.testing.assert_close(a1.grad, a2.grad)
    torch.testing.assert_close(b1.grad, b2.grad)
