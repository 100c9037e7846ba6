"""Graphs that write their inputs (issue 15, point 4): AOT autograd keeps an inference graph's input mutations
in it (`copy_(input, value)`), irc computes the new values and writes them into the inputs after a call; the
CPU target computes a value in the input's own memory where nothing reads the old one after (an optimizer
step: no allocation and no copy per parameter), and copies it where that is not safe.

Each case checks the graph's results and the inputs after several calls against eager, on every target (the
triton target's tensors on the GPU where there is one, tests/triton/programs.py: on_device).
"""

import pytest
import torch

import irc
from tests.conftest import compile_irc
from tests.triton.programs import on_device

TARGETS = ["cpu", "reference", "triton"]


def _writes(mark: int):
    """(inputs written, of them in place) over the graphs compiled since `mark`."""
    graphs = irc.report.reports_since(mark).graphs
    return sum(g.input_writes for g in graphs), sum(g.in_place_writes for g in graphs)


def _twins(make_opt, sizes, place=lambda t: t):
    models = []
    for _ in range(2):
        torch.manual_seed(0)
        params = [torch.nn.Parameter(place(torch.randn(s))) for s in sizes]
        for p in params:
            p.grad = torch.randn_like(p)
        models.append((params, make_opt(params)))
    return models


OPTIMIZERS = {
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def _three_steps(name: str, **options) -> int:
    """Three steps of optimizer `name`, eager and compiled with `options`, on twin parameters (odd sizes: 7x13, 13,
    a scalar); parameters and states must agree. Returns the report mark taken before compiling."""
    place = on_device if options.get("target") == "triton" else lambda t: t
    (pe, oe), (pc, oc) = _twins(OPTIMIZERS[name], [(7, 13), (13,), ()], place)
    mark = irc.report.mark()
    step = compile_irc(oc.step, **options)
    with torch.no_grad():
        for _ in range(3):
            oe.step()
            step()
    for a, b in zip(pe, pc):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
        for key, va in oe.state[a].items():  # compiled, torch's Adam keeps `step` on the parameter's device
            torch.testing.assert_close(oc.state[b][key], va, rtol=1e-5, atol=1e-6, check_device=False)
    return mark


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_compiled_optimizer_step_equals_eager(name, target):
    """Parameters and optimizer states after three compiled steps equal eager's, on every target."""
    mark = _three_steps(name, target=target)
    written, in_place = _writes(mark)
    assert written >= 3  # every parameter (and the states) written by the graph
    if target == "cpu":
        assert in_place == written, irc.report.reports_since(mark)


def _check(fn, make_inputs, target, calls=3):
    """fn compiled under no_grad equals eager: results and the inputs it writes, over several calls."""
    if target == "triton":
        make_inputs = (lambda make: lambda: on_device(make()))(make_inputs)
    torch.manual_seed(0)
    want_in = make_inputs()
    torch.manual_seed(0)
    got_in = make_inputs()  # the same values, laid out the same way
    compiled = compile_irc(fn, target=target)
    with torch.no_grad():
        for _ in range(calls):
            want, got = fn(*want_in), compiled(*got_in)
            torch.testing.assert_close(got, want)
            for a, b in zip(want_in, got_in):
                torch.testing.assert_close(b, a)


@pytest.mark.parametrize("target", TARGETS)
def test_pointwise_write_is_in_place_on_cpu(target):
    mark = irc.report.mark()
    _check(lambda x, y: x.mul_(0.5).add_(y) * 2, lambda: (torch.randn(5, 17), torch.randn(17)), target)
    written, in_place = _writes(mark)
    assert written == 1 and in_place == (1 if target == "cpu" else 0)


@pytest.mark.parametrize("target", TARGETS)
def test_write_fused_with_a_reduction_is_copied(target):
    """The new x and its sum in one reduction nest: the CPU target computes x in place only in all-parallel
    nests (a reduction's passes over a row may read the input again after writing it)."""
    mark = irc.report.mark()
    _check(lambda x, y: x.mul_(0.5).add_(y).sum(), lambda: (torch.randn(5, 17), torch.randn(17)), target)
    assert _writes(mark) == (1, 0)


@pytest.mark.parametrize("target", TARGETS)
def test_transposed_write_is_copied(target):
    """x.copy_(x.t() + 1) reads other points of x than it writes: computing it in x's memory would read new values."""
    mark = irc.report.mark()
    _check(lambda x: x.copy_(x.t() + 1).sum(0), lambda: (torch.randn(11, 11),), target)
    assert _writes(mark) == (1, 0)


@pytest.mark.parametrize("target", TARGETS)
def test_old_value_read_after_write(target):
    """The old x is read (by the matmul) after the kernel computing the new x: the new value is copied in."""

    def fn(x, w):
        old = x.clone()
        x.add_(1)
        return old @ w + x.sum()

    _check(fn, lambda: (torch.randn(6, 7), torch.randn(7, 3)), target)


@pytest.mark.parametrize("target", TARGETS)
def test_write_of_non_contiguous_input(target):
    """A strided input (every other column of a base) is written through its own strides."""

    def make():
        base = torch.randn(4, 10)
        return (base[:, ::2], torch.randn(4, 5))

    _check(lambda x, y: x.mul_(y).sum(), make, target)


@pytest.mark.parametrize("target", TARGETS)
def test_write_converts_and_broadcasts(target):
    """copy_ of a float64 row into a float32 matrix: eager's dtype conversion and broadcast."""
    _check(
        lambda x, y: x.copy_(y * 2).sum(), lambda: (torch.randn(3, 5), torch.randn(1, 5, dtype=torch.float64)), target
    )


def test_write_with_dynamic_sizes():
    """Symbolic sizes (a prime, then other sizes) still write the input."""
    compiled = compile_irc(lambda x: x.add_(1).mean(), dynamic=True)
    with torch.no_grad():
        for n in (7, 13, 1):
            a = torch.randn(n, 3)
            b = a.clone()
            torch.testing.assert_close(compiled(b), a.add_(1).mean())
            torch.testing.assert_close(b, a)


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_compiled_optimizer_step_in_place_under_every_mode(mode):
    """The launchers of reduce-overhead and max-autotune run the in-place writes too (one Python step per call)."""
    (g,) = irc.report.reports_since(_three_steps("adamw", mode=mode)).graphs
    assert g.input_writes == g.in_place_writes >= 3 and g.python_steps == 1, str(g)
