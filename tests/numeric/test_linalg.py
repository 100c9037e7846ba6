"""Dense linear algebra imports as tn.linalg (dialects/tensor/lapack.py), which runs torch's kernels: every function
of the table equals eager exactly in float32 and float64 (1x1, 3x3, 5x5, batched, column-major and transposed
inputs, whose layout picks det's and solve_triangular's algorithm), sizes stay symbolic under dynamic=True, gradients
equal eager's, a singular matrix raises eager's error, and the report shows no eager fallback."""

import pytest
import torch

import irc
from irc import report
from irc.dialects.tensor.lapack import FUNCTIONS
from tests.conftest import compile_irc

SIZES = ((1, 1), (3, 3), (5, 5), (2, 3, 3))


def general(shape, dtype, g):
    return torch.randn(*shape, dtype=dtype, generator=g)


def spd(shape, dtype, g):
    """Symmetric positive definite: cholesky, eigh and ldl need one."""
    a = general(shape, dtype, g)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def tall(shape, extra=2):
    """More rows than the square `shape`: for the factorizations of rectangular matrices."""
    return (*shape[:-2], shape[-2] + extra, shape[-1])


def rhs(shape, dtype, g, k=2):
    return general((*shape[:-1], k), dtype, g)


def lu_factors(shape, dtype, g):
    return list(torch.linalg.lu_factor(general(shape, dtype, g)))


def qr_reflectors(shape, dtype, g):
    return list(torch.geqrf(general(tall(shape), dtype, g)))


# table function -> (what calls it, its arguments for a problem of square matrices of `shape`)
CASES = {
    "cholesky_ex": (lambda s: torch.linalg.cholesky_ex(s, upper=True), lambda sh, dt, g: [spd(sh, dt, g)]),
    "inv_ex": (torch.linalg.inv_ex, lambda sh, dt, g: [general(sh, dt, g)]),
    "solve_ex": (
        lambda a, b, v: (
            torch.linalg.solve_ex(a, b),
            torch.linalg.solve_ex(a, v),
            torch.linalg.solve_ex(a, b.mT, left=False),
        ),
        lambda sh, dt, g: [general(sh, dt, g), rhs(sh, dt, g), general(sh[:-1], dt, g)],
    ),
    "det": (lambda a: (torch.linalg.det(a), torch.linalg.det(a.mT)), lambda sh, dt, g: [general(sh, dt, g)]),
    "slogdet": (torch.linalg.slogdet, lambda sh, dt, g: [general(sh, dt, g)]),
    # not eigvalsh nor svdvals: traced, they ask for the vectors too (torch's rule for tensor subclasses), whose
    # values differ from eager's in the last bits; aot_eager gives irc's
    "eigh": (lambda s: (torch.linalg.eigh(s), torch.linalg.eigh(s, UPLO="U")), lambda sh, dt, g: [spd(sh, dt, g)]),
    "eig": (torch.linalg.eig, lambda sh, dt, g: [general(sh, dt, g)]),
    "svd": (
        lambda a: (torch.linalg.svd(a, full_matrices=False), torch.linalg.svd(a.mT)),
        lambda sh, dt, g: [general(sh, dt, g)],
    ),
    "qr": (
        lambda a: (torch.linalg.qr(a), torch.linalg.qr(a, mode="complete"), torch.linalg.qr(a, mode="r")),
        lambda sh, dt, g: [general(tall(sh, 1), dt, g)],
    ),
    "lu": (lambda a: (torch.linalg.lu(a), torch.linalg.lu(a.mT[..., :-1, :])), lambda sh, dt, g: [general(sh, dt, g)]),
    "lu_factor_ex": (torch.linalg.lu_factor_ex, lambda sh, dt, g: [general(sh, dt, g)]),
    "lu_solve": (
        lambda lu, p, b: (
            torch.linalg.lu_solve(lu, p, b),
            torch.linalg.lu_solve(lu, p, b, adjoint=True),
            torch.linalg.lu_solve(lu, p, b.mT, left=False),
        ),
        lambda sh, dt, g: [*lu_factors(sh, dt, g), rhs(sh, dt, g)],
    ),
    "lu_unpack": (lambda lu, p: (torch.lu_unpack(lu, p), torch.lu_unpack(lu, p, unpack_pivots=False)), lu_factors),
    "solve_triangular": (
        lambda a, b: (
            torch.linalg.solve_triangular(a, b, upper=True),
            torch.linalg.solve_triangular(a.mT, b.mT, upper=False, left=False, unitriangular=True),
        ),
        lambda sh, dt, g: [general(sh, dt, g) + 3 * torch.eye(sh[-1], dtype=dt), rhs(sh, dt, g)],
    ),
    "triangular_solve": (
        lambda b, a: torch.triangular_solve(b, a, upper=False, transpose=True),
        lambda sh, dt, g: [rhs(sh, dt, g), general(sh, dt, g) + 3 * torch.eye(sh[-1], dtype=dt)],
    ),
    "householder_product": (torch.linalg.householder_product, qr_reflectors),
    "ldl_factor_ex": (torch.linalg.ldl_factor_ex, lambda sh, dt, g: [spd(sh, dt, g)]),
    "ldl_solve": (torch.linalg.ldl_solve, lambda sh, dt, g: [*torch.linalg.ldl_factor(spd(sh, dt, g)), rhs(sh, dt, g)]),
    "geqrf": (torch.geqrf, lambda sh, dt, g: [general(tall(sh), dt, g)]),
    "ormqr": (
        lambda a, tau, c: (torch.ormqr(a, tau, c), torch.ormqr(a, tau, c.mT, left=False, transpose=True)),
        lambda sh, dt, g: [*qr_reflectors(sh, dt, g), rhs(tall(sh), dt, g)],
    ),
    "cholesky": (lambda s: torch.cholesky(s, upper=True), lambda sh, dt, g: [spd(sh, dt, g)]),
    "cholesky_inverse": (torch.cholesky_inverse, lambda sh, dt, g: [torch.linalg.cholesky(spd(sh, dt, g))]),
    "cholesky_solve": (torch.cholesky_solve, lambda sh, dt, g: [rhs(sh, dt, g), torch.linalg.cholesky(spd(sh, dt, g))]),
    "matrix_exp": (torch.linalg.matrix_exp, lambda sh, dt, g: [general(sh, dt, g) / 2]),
    "pinv": (
        lambda a, r: (torch.linalg.pinv(a), torch.linalg.pinv(a, rtol=r), torch.linalg.pinv(a @ a.mT, hermitian=True)),
        lambda sh, dt, g: [general(tall(sh, 1), dt, g), torch.tensor(0.3, dtype=torch.float64)],
    ),
}


def column_major(x):
    """The same values in another layout: eager's kernels copy or transpose such operands themselves."""
    return x.mT.contiguous().mT if x.dim() >= 2 and x.is_floating_point() else x


def problems(name, dtype):
    """(fn of all the problems' arguments, those arguments): one problem per size, the odd ones column-major."""
    fn, make = CASES[name]
    g = torch.Generator().manual_seed(len(name))
    groups = [make(shape, dtype, g) for shape in SIZES]
    groups = [[column_major(x) for x in args] if i % 2 else args for i, args in enumerate(groups)]
    ends = [sum(len(a) for a in groups[: i + 1]) for i in range(len(groups))]

    def all_problems(*flat):
        return tuple(fn(*flat[start:end]) for start, end in zip([0, *ends], ends))

    return all_problems, [x for args in groups for x in args]


def same(got, want):
    if isinstance(want, torch.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape, (
            f"{got.dtype}{list(got.shape)} != eager {want.dtype}{list(want.shape)}"
        )
        assert (
            torch.equal(got, want)
            or torch.equal(got.isnan(), want.isnan())
            and torch.equal(got.nan_to_num(), want.nan_to_num())
        ), f"{got} != eager {want}"
        return
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def test_every_function_of_the_table_is_tested():
    assert set(CASES) == set(FUNCTIONS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", CASES)
def test_equals_eager_exactly(name, dtype):
    fn, args = problems(name, dtype)
    same(compile_irc(fn, dynamic=False)(*args), fn(*args))


def test_no_eager_fallback():
    """Every function runs as tn.linalg: nothing is left to an eager call."""
    for name in CASES:
        fn, args = problems(name, torch.float32)
        rep = irc.explain(fn, *args, options={"strict": True})
        assert rep.native, f"{name}: {rep}"
        assert all("tn.linalg" in g.externs for g in rep.graphs), f"{name}: {rep}"


@pytest.mark.parametrize("name", ["cholesky_ex", "solve_ex", "det", "svd", "qr", "lu_solve", "pinv"])
def test_dynamic_sizes_compile_once(name):
    fn, make = CASES[name]
    g = torch.Generator().manual_seed(0)
    start = report.mark()
    compiled = compile_irc(fn, dynamic=True)
    for shape in ((3, 4, 4), (5, 6, 6)):  # no size equal to another (Dynamo would share their symbol)
        args = make(shape, torch.float32, g)
        same(compiled(*args), fn(*args))
    rep = report.reports_since(start)
    assert len(rep.graphs) == 1 and rep.native, str(rep)


GRADIENTS = {
    "cholesky": lambda s: torch.linalg.cholesky(s).sum(),
    "solve": lambda a, b: torch.linalg.solve(a, b).pow(2).sum(),
    "det": lambda a, b: (
        torch.linalg.det(a).sum() + torch.linalg.det(b.mT + a).sum() + torch.linalg.slogdet(b.mT)[1].sum()
    ),
    "inv": lambda a: torch.linalg.inv(a).sum(),
    "nuclear-norm": lambda a: torch.linalg.matrix_norm(a, "nuc").sum() + torch.linalg.svdvals(a.mT).sum(),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradients_equal_eagers(name):
    loss = GRADIENTS[name]
    g = torch.Generator().manual_seed(1)
    args = [spd((2, 4, 4), torch.float32, g) for _ in range(loss.__code__.co_argcount)]
    if name == "solve":
        args[1] = rhs((2, 4, 4), torch.float32, g)
    mine = [a.clone().requires_grad_() for a in args]
    theirs = [a.clone().requires_grad_() for a in args]
    compile_irc(loss)(*mine).backward()
    loss(*theirs).backward()
    for m, t in zip(mine, theirs):
        torch.testing.assert_close(m.grad, t.grad)


@pytest.mark.parametrize(
    "fn",
    [torch.linalg.inv, torch.linalg.cholesky, lambda a: torch.linalg.solve(a, a[..., :1])],
    ids=["inv", "cholesky", "solve"],
)
def test_a_singular_matrix_raises_eagers_error(fn):
    a = torch.randn(3, 4, 4)
    a[1] = 0.0
    with pytest.raises(torch.linalg.LinAlgError) as want:
        fn(a)
    with pytest.raises(torch.linalg.LinAlgError) as got:
        compile_irc(fn)(a)
    assert str(got.value) == str(want.value)
