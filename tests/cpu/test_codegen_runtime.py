"""The CPU target's runtime around the generated code: entry checks that name the argument, fallbacks that are
reported, vector code and fresh outputs, the cache across processes, launches split across threads and calls of
one program from several threads."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import irc
from irc import report
from irc.targets.cpu.codegen import ops
from irc.targets.cpu.runtime.executor import InputMismatch
from tests.cpu.programs import build, check

G = torch.Generator().manual_seed(1)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=G).to(dtype)


# -- the runtime: entry checks, reported fallbacks, vector code ------------------------------------------


def test_entry_checks_name_the_argument():
    x, y = randn(4, 17), randn(17)
    program, _ = build(lambda a, b: a * b, x, y)
    program([x, y])
    cases = [
        ([x.double(), y], "arg0_1.*dtype torch.float64"),
        ([x, randn(18)], "arg1_1.*size"),
        ([randn(17, 4).t(), y], "arg0_1.*strides"),
        ([x, 3.0], "arg1_1.*must be a tensor"),
        ([x], "takes 2 arguments"),
    ]
    for args, pattern in cases:
        with pytest.raises(InputMismatch, match=pattern):
            program(args)
    program([randn(4, 17), randn(1, 17)[0]])  # same strides where it matters: accepted


def test_dynamic_entry_check_binds_symbols_consistently():
    x, y = randn(4, 17), randn(4, 17)
    program, _ = build(lambda a, b: a + b, x, y, dynamic=True)
    assert program([randn(2, 5), randn(2, 5)])[0].shape == (2, 5)
    with pytest.raises(InputMismatch, match="arg1_1"):
        program([randn(2, 5), randn(3, 5)])


def test_missing_emitter_runs_on_the_reference_and_is_reported(monkeypatch):
    from xdsl.dialects import math

    monkeypatch.delitem(ops.EMIT, math.TanhOp)
    start = report.mark()
    f = torch.compile(lambda x: x.tanh() * 2, backend=irc.backend, options={"strict": True})
    x = randn(5, 17)
    torch.testing.assert_close(f(x), x.tanh() * 2)
    (g,) = report.reports_since(start).graphs
    assert any("no CPU emitter for math.tanh" in reason for _, reason in g.target_fallbacks), str(g)
    assert "reference" in str(g)


def test_kernels_are_vectorised_and_outputs_fresh():
    program, _ = build(lambda x: (x * 2).exp(), randn(64, 64), cache=False)
    text = program.compiled.lib.optimized_ir
    from irc.targets.cpu.runtime.jit import host

    assert f"<{host().lanes(32)} x float>" in text
    assert program.fresh == [True]


def test_a_library_products_result_is_a_fresh_output():
    """A dynamic graph's product result is the library's own new tensor (an extern's result, not a planned buffer):
    it is returned without the check that an output shares no memory with an input. An eager fallback's result may
    be a view of an input, so it keeps the check."""
    a, b = randn(5, 7), randn(7, 3)
    product, _ = build(lambda a, b: a @ b, a, b, dynamic=True, cache=False)
    assert [s.op.body.block.first_op.name for s in product.compiled.g.steps if s.kind == "extern"] == ["tn.mm"]
    assert product.fresh == [True]
    fallback, _ = build(lambda a, b: torch.polar(a, b), a, randn(5, 7), dynamic=True, cache=False, strict=False)
    assert fallback.fresh == [False]


def test_reference_target_still_available():
    start = report.mark()
    f = torch.compile(lambda x: x.exp() + 1, backend=irc.backend, options={"strict": True, "target": "reference"})
    x = randn(5)
    torch.testing.assert_close(f(x), x.exp() + 1)
    assert report.reports_since(start).graphs[0].target == "reference"


# -- the on-disk cache across processes ------------------------------------------------------------------

_SCRIPT = textwrap.dedent("""
    import os, pathlib, sys, torch, irc
    from irc import report
    objects = pathlib.Path(os.environ["IRC_CACHE_DIR"]) / "obj"
    x = torch.randn(4, 33)
    if sys.argv[1] == "first":  # options={"cache": False} writes nothing; then a cached compile stores its code
        f = torch.compile(lambda x: x.exp() * 2 - x, backend=irc.backend, options={"strict": True, "cache": False})
        torch.testing.assert_close(f(x), x.exp() * 2 - x)
        assert not objects.exists(), list(objects.rglob("*"))
    g = torch.compile(lambda x: (x * 3).tanh() + x.sum(-1, keepdim=True), backend=irc.backend, options={"strict": True})
    torch.testing.assert_close(g(x), (x * 3).tanh() + x.sum(-1, keepdim=True))
    print(" ".join(str(r.cache_hit) for r in report.reports_since(0).graphs if r.kernels))
""")


def _run(tmp_path, mode: str) -> str:
    env = dict(os.environ, IRC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("IRC_CACHE", None)
    p = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode], env=env, capture_output=True, text=True, timeout=300, cwd=str(tmp_path)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip().splitlines()[-1]


def test_cache_across_processes(tmp_path):
    assert _run(tmp_path, "first") == "False False"  # compiled: without the cache, then into it
    assert any((tmp_path / "cache" / "obj").rglob("*"))
    assert _run(tmp_path, "second") == "True"  # a fresh process compiles nothing it compiled before


# -- large enough to run in parallel: chunks, rows and column reductions split across threads -------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: (x * 2).sin(),
        lambda x: x.sum(-1),
        lambda x: x.sum(0),
        lambda x: torch.softmax(x, -1),
        lambda x: x.flatten().cumsum(0)[::7] * 1,
    ],
)
@pytest.mark.parametrize("shape", [(3, 20011), (515, 257)])
def test_parallel_launches(fn, shape):
    check(fn, randn(*shape))


def test_concurrent_calls_of_one_program():
    import threading

    program, _ = build(lambda x, y: torch.softmax(x * y, -1).sum(-1), randn(64, 1000), randn(1000))
    inputs = [(randn(64, 1000), randn(1000)) for _ in range(8)]
    want = [torch.softmax(x * y, -1).sum(-1) for x, y in inputs]
    got = [None] * len(inputs)

    def work(i):
        for _ in range(20):
            got[i] = program(list(inputs[i]))[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
