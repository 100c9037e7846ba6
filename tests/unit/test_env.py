"""env.py: every environment variable irc reads, parsed in one place; a bad value is a clear error that
fails the compile (never a traceback swallowed into an eager fallback); the guide's tables match it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from irc import env

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


@pytest.mark.parametrize(
    "name, text, value",
    [
        ("IRC_PROGRESS", "0", False),
        ("IRC_PROGRESS", "On", True),
        ("IRC_PARALLEL_MIN_WORK", "100", 100),
        ("IRC_POOL_BYTES", "512M", 512 << 20),
        ("IRC_POOL_BYTES", "1.5G", 3 << 29),
        ("IRC_CACHE_MAX_SIZE", "4096", 4096),
        ("IRC_EXTERN_PATH", "mkldnn", "mkldnn"),
        ("IRC_DUMP_DIR", "/tmp/d", "/tmp/d"),
        ("IRC_COMPILE_DEADLINE", "2.5", 2.5),
        ("IRC_COMPILE_DEADLINE", "0", 0.0),
    ],
)
def test_values_parse(monkeypatch, name, text, value):
    monkeypatch.setenv(name, text)
    assert env.get(name) == value


def test_unset_and_empty_give_the_default(monkeypatch):
    monkeypatch.delenv("IRC_PARALLEL_MIN_WORK", raising=False)
    assert env.get("IRC_PARALLEL_MIN_WORK") == 65536
    monkeypatch.setenv("IRC_PARALLEL_MIN_WORK", "")
    assert env.get("IRC_PARALLEL_MIN_WORK") == 65536
    assert env.get("IRC_POOL_BYTES") == 1 << 30


@pytest.mark.parametrize(
    "name, text, valid",
    [
        ("IRC_PARALLEL_MIN_WORK", "abc", "a whole number >= 0"),
        ("IRC_PREFETCH", "-5", "a whole number >= 0"),
        ("IRC_POOL_BYTES", "lots", "K, M, G or T suffix"),
        ("IRC_POOL_BYTES", "inf", "K, M, G or T suffix"),
        ("IRC_CACHE", "maybe", "1 or 0"),
        ("IRC_EXTERN_PATH", "onednn", "aten, aten_cl, mkldnn, mkldnn_packed"),
        ("IRC_COMPILE_DEADLINE", "-1", "seconds, a number >= 0"),
        ("IRC_COMPILE_DEADLINE", "nan", "seconds, a number >= 0"),
    ],
)
def test_a_bad_value_names_the_variable_and_the_valid_values(monkeypatch, name, text, valid):
    monkeypatch.setenv(name, text)
    with pytest.raises(env.EnvError) as e:
        env.get(name)
    assert f"{name}={text!r}" in str(e.value) and valid in str(e.value), str(e.value)


def test_a_misspelled_choice_gets_a_suggestion(monkeypatch):
    monkeypatch.setenv("IRC_EXTERN_PATH", "mkldnn_pakced")
    with pytest.raises(env.EnvError, match="did you mean 'mkldnn_packed'"):
        env.check_all()


def test_an_unknown_irc_variable_is_a_warning_with_a_suggestion(monkeypatch):
    monkeypatch.setenv("IRC_PARALEL_MIN_WORK", "10")
    with pytest.warns(UserWarning, match="IRC_PARALEL_MIN_WORK is ignored; did you mean IRC_PARALLEL_MIN_WORK"):
        env.check_all()


def test_a_bad_value_fails_the_compile_with_its_message(monkeypatch):
    monkeypatch.setenv("IRC_POOL_BYTES", "1 gig")
    compiled = torch.compile(lambda x: x * 2, backend="irc")  # not strict: still no eager fallback
    with pytest.raises(Exception, match=r"IRC_POOL_BYTES='1 gig' is not valid; valid values: bytes"):
        compiled(torch.ones(3))


def test_a_bad_value_in_a_fresh_process_is_one_clear_error():
    """The issue's case: a module-level int() in the cpu target used to print a ValueError traceback and
    run the graph eagerly. Now the first compile stops with irc's message."""
    code = "import torch; print(torch.compile(lambda x: x + 1, backend='irc')(torch.ones(2)))"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "IRC_PARALLEL_MIN_WORK": "abc", "IRC_PROGRESS": "0"},
    )
    assert run.returncode != 0, run.stdout
    assert "IRC_PARALLEL_MIN_WORK='abc' is not valid; valid values: a whole number >= 0" in run.stderr, run.stderr
    assert "invalid literal for int()" not in run.stderr and "tensor(" not in run.stdout


def test_every_variable_is_documented_in_the_guide():
    """The guide's two environment tables are the module's, row for row."""
    text = GUIDE.read_text()
    assert env.markdown_table(development=False) in text
    assert env.markdown_table(development=True) in text
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", text, re.M))
    assert documented == set(env.VARIABLES), documented ^ set(env.VARIABLES)


def test_extern_path_choices_are_the_kernels_paths():
    from irc.targets.cpu.libs.externs import ConvKernel, LinearKernel

    paths = set(LinearKernel(torch.randn(4, 4)).paths()) | set(ConvKernel(torch.randn(2, 2, 3, 3)).paths())
    assert set(env.VARIABLES["IRC_EXTERN_PATH"].choices) == paths
