"""The mem stage's binary form in the disk cache (ir/text.py dump_module/load_module, lowering/pipeline.py): it reads
back as the module it was, also for chains of ops far deeper than Python's recursion limit, and a warm compile takes
it instead of parsing the stage's text. The text is written only for a module the binary form cannot hold, and then
serves a warm compile in its place."""

import sys

from irc import cache
from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module
from irc.ir.text import dump_module, load_module
from irc.lowering import pipeline
from irc.lowering.pipeline import Plan


def _chain(n: int) -> str:
    """@main of n dependent tn ops (each reads the one before): pickle's recursion follows the chain."""
    lines = ["func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {", "  %v0 = tn.neg %x : tensor<4x3xf32>"]
    lines += [f"  %v{i} = tn.{('exp', 'neg', 'tanh')[i % 3]} %v{i - 1} : tensor<4x3xf32>" for i in range(1, n)]
    lines += [f"  func.return %v{n - 1} : tensor<4x3xf32>", "}"]
    return "\n".join(lines) + "\n"


def test_a_deep_module_reads_back_as_it_was():
    n = 4 * sys.getrecursionlimit()
    module = parse_module(make_context(ALL_DIALECTS), _chain(n))
    again = load_module(dump_module(module))
    again.verify()
    assert print_module(again) == print_module(module)
    assert sys.getrecursionlimit() < n  # restored after the deep thread


def _lower(text: str, key: str) -> tuple[str, pipeline.Result]:
    module = parse_module(make_context(ALL_DIALECTS), text)
    done = pipeline.run(module, Plan(), cache_key=key)
    return print_module(module), done


def test_a_warm_compile_reads_the_binary_form_and_no_text_is_written(tmp_path, monkeypatch):
    text = _chain(40)
    cache.set_dir(tmp_path)
    try:
        cold, first = _lower(text, "binary-test")
        with monkeypatch.context() as m:  # the warm compile parses no cached text
            m.setattr(pipeline, "parse_module", lambda *a: (_ for _ in ()).throw(AssertionError("parsed the text")))
            warm, second = _lower(text, "binary-test")
        assert not first.cached and second.cached and warm == cold
        assert len([p for p in (tmp_path / "mem-ir").rglob("*") if p.is_file()]) == 1
        assert not (tmp_path / "mem").exists()  # printing the text cost 8x the binary's dump
    finally:
        cache.set_dir(None)


def test_a_module_the_binary_form_cannot_hold_is_cached_as_text(tmp_path, monkeypatch):
    text = _chain(40)
    cache.set_dir(tmp_path)
    try:
        with monkeypatch.context() as m:
            m.setattr(pipeline, "dump_module", lambda module: (_ for _ in ()).throw(TypeError("cannot pickle")))
            cold, first = _lower(text, "text-test")
        assert not (tmp_path / "mem-ir").exists() and [p for p in (tmp_path / "mem").rglob("*") if p.is_file()]
        warm, second = _lower(text, "text-test")
        assert not first.cached and second.cached and warm == cold
    finally:
        cache.set_dir(None)
