"""irc's logging (irc/log.py, dynamo/compile_log.py): topics under the `irc` logger, IRC_LOGS, TORCH_LOGS
and set_logs, the progress line of slow compiles."""

import io
import logging
import os
import subprocess
import sys
import time

import pytest
import torch

from irc import log
from tests.conftest import compile_irc


@pytest.fixture(autouse=True)
def _no_irc_logs(monkeypatch):
    """Each test starts and ends with IRC_LOGS unset and the loggers as configure() leaves them then."""
    monkeypatch.delenv("IRC_LOGS", raising=False)
    monkeypatch.delenv("IRC_PROGRESS", raising=False)
    log.configure("")
    yield
    log.configure("")


class Records(logging.Handler):
    """The records of the `irc` loggers (pytest's caplog may be switched off with -p no:logging)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def clear(self):
        self.records.clear()

    def at_level(self, level):
        import contextlib

        @contextlib.contextmanager
        def ctx():
            root = logging.getLogger("irc")
            old = root.level
            root.setLevel(level)
            root.addHandler(self)
            try:
                yield
            finally:
                root.removeHandler(self)
                root.setLevel(old)

        return ctx()


@pytest.fixture
def caplog():
    return Records()


def _records(caplog, topic):
    return [r.getMessage() for r in caplog.records if r.name == f"irc.{topic}"]


def test_parse_words_topics_and_debug():
    assert log.parse("info") == {f"irc.{t}": logging.INFO for t in log.TOPICS}
    assert log.parse("debug") == {f"irc.{t}": logging.DEBUG for t in log.TOPICS}
    assert log.parse("stages, +fusion") == {"irc.stages": logging.INFO, "irc.fusion": logging.DEBUG}
    with pytest.raises(ValueError, match="unknown word 'bogus'.*stages"):
        log.parse("stages,bogus")
    with pytest.raises(ValueError, match="unknown word 'stage' \\(did you mean 'stages'\\?\\)"):
        log.parse("stage")


def test_stage_fusion_and_cache_messages_for_a_compiled_graph(caplog, tmp_path, monkeypatch):
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    fn = lambda x: torch.relu(x * 2 + 1).sum(-1)  # noqa: E731
    x = torch.randn(8, 16)
    with caplog.at_level(logging.DEBUG):
        torch.testing.assert_close(compile_irc(fn)(x), fn(x))
    stages = _records(caplog, "stages")
    assert any(
        "graph" in m and "(inference)" in m and "compiled in" in m and "tensor-opt" in m and "runs on cpu" in m
        for m in stages
    ), stages
    assert any(" pass " in m for m in stages), stages  # DEBUG: each pass's time
    assert any("fused kernels" in m for m in _records(caplog, "fusion"))
    cache = _records(caplog, "cache")
    assert any("mem stage not in the disk cache (miss)" in m for m in cache), cache
    assert any("machine code compiled (miss)" in m for m in cache), cache

    caplog.clear()  # a second compile of the same graph in a fresh Dynamo: the disk cache serves it
    torch._dynamo.reset()
    with caplog.at_level(logging.INFO):
        compile_irc(fn)(x)
    cache = _records(caplog, "cache")
    assert any("mem stage from the disk cache (hit)" in m for m in cache), cache


def test_fallback_and_recompile_messages(caplog):
    def fn(x):
        return torch.view_as_real(torch.polar(x.abs(), x)).sum() + x.sum()  # complex numbers: eager calls

    compiled = torch.compile(fn, backend="irc", dynamic=False)
    with caplog.at_level(logging.INFO):
        compiled(torch.randn(4, 3))
        compiled(torch.randn(5, 3))  # static shapes: a new size recompiles the frame
    fallbacks = _records(caplog, "fallbacks")
    assert any("polar" in m and "runs eagerly" in m for m in fallbacks), fallbacks
    recompiles = _records(caplog, "recompiles")
    assert any("recompiles frame" in m and "compile 1 of that frame" in m for m in recompiles), recompiles


def test_irc_logs_sends_the_chosen_topics_to_stderr(capsys, monkeypatch):
    monkeypatch.setenv("IRC_LOGS", "stages")
    fn = lambda x: x.sin() + 1  # noqa: E731
    compile_irc(fn)(torch.randn(4))
    err = capsys.readouterr().err
    assert "[irc.stages] graph" in err and "compiled in" in err, err
    assert "[irc.fusion]" not in err and "[irc.cache]" not in err, err
    assert logging.getLogger("irc").propagate is False  # shown once, not again by the application's handlers
    log.configure("")
    assert logging.getLogger("irc").propagate is True and not logging.getLogger("irc").handlers


def test_levels_the_application_set_survive_without_irc_logs():
    fusion = logging.getLogger("irc.fusion")
    fusion.setLevel(logging.DEBUG)
    try:
        log.configure("stages")
        log.configure("")
        assert fusion.level == logging.DEBUG and logging.getLogger("irc.stages").level == logging.NOTSET
    finally:
        fusion.setLevel(logging.NOTSET)


def test_malformed_irc_logs_fails_the_compile_with_the_valid_words(monkeypatch):
    monkeypatch.setenv("IRC_LOGS", "stages,fuson")
    compiled = torch.compile(lambda x: x * 3, backend="irc")
    with pytest.raises(Exception, match=r"IRC_LOGS: unknown word 'fuson' \(did you mean 'fusion'\?\); use info, debug"):
        compiled(torch.ones(2))
    assert logging.getLogger("irc.stages").level == logging.NOTSET  # a bad spec changes nothing


PROBE = "Metadata-Version: 2.1\nName: irc-torch-logs-probe\nVersion: 0\n"


def _python(code: str, tmp_path, **environ) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter whose torch loads irc's `torch.backends` entry point (declared here by
    a dist-info on PYTHONPATH, as an installed irc declares it), with a private disk cache."""
    info = tmp_path / "irc_torch_logs_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(PROBE)
    (info / "entry_points.txt").write_text("[torch.backends]\nirc-logs = irc.log:torch_logging_hook\n")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = {k: v for k, v in os.environ.items() if k not in ("IRC_LOGS", "TORCH_LOGS")}
    env.update(PYTHONPATH=path, IRC_CACHE_DIR=str(tmp_path / "cache"), IRC_PROGRESS="0", **environ)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)


COMPILE = "import torch; torch.compile(lambda x: (x * 2 + 1).relu().sum(-1), backend='irc')(torch.randn(4, 8))\n"


def test_torch_logs_names_one_irc_topic(tmp_path):
    run = _python(COMPILE, tmp_path, TORCH_LOGS="irc_fusion")
    assert run.returncode == 0, run.stderr
    assert "1 fused kernels" in run.stderr, run.stderr  # irc.fusion at INFO
    assert "compiled in" not in run.stderr, run.stderr  # irc.stages stays off


def test_torch_logs_plus_irc_is_every_topic_at_debug(tmp_path):
    run = _python(COMPILE, tmp_path, TORCH_LOGS="+irc")
    assert run.returncode == 0, run.stderr
    assert "compiled in" in run.stderr and ": pass " in run.stderr, run.stderr  # irc.stages, with DEBUG's pass times
    assert "fused kernels" in run.stderr, run.stderr


def test_set_logs_reaches_an_irc_topic(tmp_path):
    code = COMPILE + (
        "import logging; torch._logging.set_logs(modules={'irc_stages': logging.INFO})\n"
        "torch.compile(lambda x: x.sin() * 3, backend='irc')(torch.randn(4))\n"
    )
    run = _python(code, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("compiled in") == 1, run.stderr  # the graph compiled after set_logs, only


def test_progress_line_only_after_the_delay():
    quick = io.StringIO()
    with log.Progress("graph 0 (forward)", delay=0.5, stream=quick):
        pass
    assert quick.getvalue() == ""

    slow = io.StringIO()

    def wait_for(text):  # the progress thread runs when the machine lets it: poll, do not sleep a fixed time
        deadline = time.perf_counter() + 10
        while text not in slow.getvalue() and time.perf_counter() < deadline:
            time.sleep(0.01)

    with log.Progress("graph 1 (forward)", delay=0.05, interval=0.02, stream=slow) as p:
        wait_for("import ...")
        log.stage("loop+mem")  # the compile running on this thread names its stage
        assert p.stage == "loop+mem"
        wait_for("loop+mem ...")
    lines = slow.getvalue().splitlines()
    assert lines[0].startswith("irc: compiling graph 1 (forward): import ... ") and lines[0].endswith(" s"), lines
    assert lines[1].startswith("irc: compiling graph 1 (forward): loop+mem ... "), lines
    assert len(lines) == 3, lines  # not a tty: one line per stage, then the total
    assert lines[-1].startswith("irc: compiled graph 1 (forward) in "), lines


def test_progress_is_off_with_irc_progress_0(monkeypatch):
    monkeypatch.setenv("IRC_PROGRESS", "0")
    out = io.StringIO()
    with log.Progress("graph 2 (forward)", delay=0.0, interval=0.01, stream=out):
        time.sleep(0.05)
    assert out.getvalue() == ""
