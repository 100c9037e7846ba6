"""A graph is compiled once (targets/cpu/runtime/compiled.py) and run by executors (executor.py); max-autotune's
search (autotune.tune) returns its choices and changes nothing until the build applies them."""

import torch

from irc.targets.cpu.runtime import autotune
from irc.targets.cpu.runtime.executor import Executor

from .programs import build


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
