"""A graph is compiled once (targets/cpu/runtime/compiled.py) and run by executors (executor.py); max-autotune's
search (autotune.tune) returns its choices and changes nothing until the build applies them."""

import weakref

import pytest
import torch

from irc.targets.cpu.runtime import autotune, steps
from irc.targets.cpu.runtime.executor import Executor

from .programs import build, tolerance


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def test_two_executors_of_one_compiled_graph_agree_and_share_no_buffers():
    fn = lambda x, y: torch.softmax(x * y, -1).sum(-1)  # noqa: E731
    x, y = randn(64, 100), randn(100)
    program, consts = build(fn, x, y, cache=False)
    other = Executor(program.compiled)
    got, again = program([x, y, *consts])[0], other([x, y, *consts])[0]
    torch.testing.assert_close(got, fn(x, y))
    torch.testing.assert_close(again, got, rtol=0, atol=0)
    assert got.data_ptr() != again.data_ptr()
    assert other.python_steps == program.python_steps


def test_autotune_returns_choices_that_only_the_build_applies(monkeypatch):
    monkeypatch.setattr(autotune, "MARGIN", 1e9)  # every variant qualifies: a choice is made for each measured launch
    monkeypatch.setattr(autotune, "SMALL_S", 0.0)
    monkeypatch.setattr(autotune, "BUDGET_S", 0.5)
    fn = lambda x: x.t() * 2  # noqa: E731
    x = randn(67, 133)
    program, _ = build(fn, x, cache=False)
    compiled = program.compiled

    def state():
        return compiled.llvm_ir, [ln.variant for ln in compiled.launches], [ln.plan for ln in compiled.launches]

    before = state()
    choices, notes = autotune.tune(compiled, program, use_cache=False)
    assert state() == before  # measuring changed nothing
    assert choices is not None and len(choices.launches) == len(compiled.launches), notes
    program.rebuild(choices, cache=False)
    assert [ln.variant for ln in compiled.launches] == choices.launches
    torch.testing.assert_close(program([x])[0], fn(x))


@pytest.mark.parametrize("how", ["generated call", "step by step under the profiler"])
def test_a_call_drops_each_library_result_after_its_last_reader(monkeypatch, how):
    """A library product's fresh result goes back to the allocator once no later step reads it, not when the call
    ends: the next result of the call then lands in memory still in cache."""
    bound: list = []  # a weak reference to each product's result, in the order the call binds them
    alive_when_bound: list[list[bool]] = []
    real = steps.extern_results

    def spy(cx, g, st, fresh):
        alive_when_bound.append([ref() is not None for ref in bound])
        bound.extend(weakref.ref(t) for t in fresh)
        real(cx, g, st, fresh)

    monkeypatch.setattr(steps, "extern_results", spy)
    fn = lambda x, w1, w2, w3: ((x @ w1).relu() @ w2).relu() @ w3  # noqa: E731
    args = randn(64, 96), randn(96, 80), randn(80, 72), randn(72, 40)
    program, consts = build(fn, *args, cache=False, dynamic=True)  # runtime sizes: each product's result is fresh
    if how == "generated call":
        got = program([*args, *consts])[0]
    else:
        with torch.profiler.profile():
            got = program([*args, *consts])[0]
    torch.testing.assert_close(got, fn(*args), **tolerance(torch.float32))
    assert len(alive_when_bound) == 3, alive_when_bound  # the three products, each a library call
    assert alive_when_bound[2][0] is False  # the first product's result was dropped before the third's came
