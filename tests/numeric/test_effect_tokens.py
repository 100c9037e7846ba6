"""Ops AOT autograd orders with effect tokens (with_effects: linalg's checks that raise on a singular matrix) compile:
linalg's check imports as tn.check_linalg (frontend/effects.py), so the graph has no eager fallback on any target,
the token (None at run time) passes through, and a singular or otherwise failing matrix raises eager's error with
eager's message. Inference and training, every target; each linalg function whose OpInfo entry the check kept in
fallback, with a good input (eager's numbers) and a failing one (eager's error)."""

import os

import pytest
import torch

import irc
from tests.conftest import compile_irc

if not torch.cuda.is_available():  # as tests/triton/conftest.py: before Triton is first imported
    os.environ.setdefault("TRITON_INTERPRET", "1")

TARGETS = ["cpu", "reference", "triton"]


def solve_relu(a, b):
    return torch.linalg.solve(a, b).relu() * 2 + torch.linalg.inv(a).sum()


def matrices(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 4, 4, generator=g) + 4 * torch.eye(4), torch.randn(3, 4, 2, generator=g)


def raised(fn, *args) -> BaseException:
    with pytest.raises(Exception) as e:
        fn(*args)
    return e.value


def assert_raises_like_eager(fn, compiled, *args):
    want, got = raised(fn, *args), raised(compiled, *args)
    assert type(got) is type(want) and str(got) == str(want)


@pytest.mark.parametrize("target", TARGETS)
def test_graph_compiles_with_the_check_native(target):
    a, b = matrices()
    torch.testing.assert_close(compile_irc(solve_relu, target=target)(a, b), solve_relu(a, b))
    rep = irc.explain(solve_relu, a, b, options={"strict": True, "target": target})
    (g,) = rep.graphs
    assert g.eager_graph is None and (g.kernels >= 1 or target == "reference"), str(rep)
    assert g.fallbacks == [] and g.imported["aten::_linalg_check_errors.default"] == 2, str(rep)


@pytest.mark.parametrize("target", TARGETS)
def test_a_singular_matrix_raises_eagers_error(target):
    a, b = matrices()
    a[1] = 0.0
    compiled = compile_irc(solve_relu, target=target)
    assert isinstance(raised(compiled, a, b), torch.linalg.LinAlgError)
    assert_raises_like_eager(solve_relu, compiled, a, b)
    torch.testing.assert_close(compiled(*matrices(2)), solve_relu(*matrices(2)))  # the same graph, a good matrix


@pytest.mark.parametrize("target", TARGETS)
def test_gradients_through_solve_equal_eagers(target):
    a, b = matrices(1)
    a1, b1 = a.clone().requires_grad_(), b.clone().requires_grad_()
    a2, b2 = a.clone().requires_grad_(), b.clone().requires_grad_()
    compile_irc(solve_relu, target=target)(a1, b1).pow(2).sum().backward()
    solve_relu(a2, b2).pow(2).sum().backward()
    torch.testing.assert_close(a1.grad, a2.grad)
    torch.testing.assert_close(b1.grad, b2.grad)


def _spd(n=3, batch=(2,)):
    a = torch.randn(*batch, n, n, generator=torch.Generator().manual_seed(3))
    return a @ a.mT + n * torch.eye(n)


def _square(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(4)) + 4 * torch.eye(shape[-1])


# name: (function, good arguments, failing arguments); the checks of both batched and single matrices
FUNCTIONS = {
    "linalg.cholesky": (torch.linalg.cholesky, (_spd(),), (-_spd(),)),
    "linalg.inv": (torch.linalg.inv, (_square(2, 3, 3),), (torch.zeros(2, 3, 3),)),
    "linalg.ldl_factor": (lambda a: torch.linalg.ldl_factor(a), (_spd(),), (torch.zeros(2, 3, 3),)),
    "linalg.lu_factor": (lambda a: torch.linalg.lu_factor(a), (_square(2, 3, 3),), (torch.zeros(2, 3, 3),)),
    "linalg.matrix_power": (lambda a: torch.linalg.matrix_power(a, -2), (_square(3, 3),), (torch.zeros(3, 3),)),
    "linalg.solve": (
        torch.linalg.solve,
        (_square(2, 3, 3), torch.ones(2, 3)),
        (torch.zeros(2, 3, 3), torch.ones(2, 3)),
    ),
    "linalg.tensorinv": (
        lambda a: torch.linalg.tensorinv(a, ind=1),
        (_square(4, 4).reshape(4, 2, 2),),
        (torch.zeros(4, 2, 2),),
    ),
    "linalg.tensorsolve": (
        torch.linalg.tensorsolve,
        (_square(6, 6).reshape(2, 3, 6), torch.ones(2, 3)),
        (torch.zeros(2, 3, 6), torch.ones(2, 3)),
    ),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_function_raises_eagers_error_and_computes_eagers_numbers(name, target):
    fn, good, bad = FUNCTIONS[name]
    compiled = compile_irc(fn, target=target)
    torch.testing.assert_close(compiled(*good), fn(*good), rtol=0, atol=0)
    assert_raises_like_eager(fn, compiled, *bad)
    rep = irc.explain(fn, *good, options={"strict": True, "target": target})
    assert all(g.eager_graph is None and g.fallbacks == [] for g in rep.graphs), str(rep)
    assert sum(g.imported["aten::_linalg_check_errors.default"] for g in rep.graphs) >= 1, str(rep)
