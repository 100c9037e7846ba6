"""Golden IR tests: every *.mlir under tests/filecheck is collected, and each `// RUN:` line is one test.

A RUN line is a pipeline of commands joined by `|`, run in-process (no lit, no subprocess):

    irc-opt ARGS         irc.tools.opt.main(ARGS), its stdin the previous command's stdout
    not irc-opt ARGS     the same, but the command must fail (exit code != 0)
    ... 2>&1             append the command's stderr to its stdout (to check diagnostics)
    cat FILE...          the files' text (to check what a command wrote)
    filecheck %s ARGS    match the text so far against the file's CHECK lines (the `filecheck` package)

`%s` is the .mlir file itself, `%t` a fresh temporary directory shared by the file's RUN lines. A RUN line ending in `\\` continues on the next `// RUN:` line.
Cases in one file are separated by `// -----` (run them with `irc-opt --split-input-file`).

    // RUN: irc-opt --stage tensor-opt %s | filecheck %s
    // RUN: not irc-opt %s 2>&1 | filecheck %s --check-prefix=ERR
"""

import contextlib
import io
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

RUN = "// RUN:"


def pytest_collect_file(parent, file_path: Path):
    if file_path.suffix == ".mlir":
        return MlirFile.from_parent(parent, path=file_path)
    return None


def run_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) for each RUN line, with `\\` continuations joined."""
    found: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith(RUN):
            continue
        cmd = line.split(RUN, 1)[1].strip()
        start, prefix = pending or (lineno, "")
        if cmd.endswith("\\"):
            pending = (start, prefix + cmd[:-1] + " ")
        else:
            found.append((start, prefix + cmd))
            pending = None
    return found


class MlirFile(pytest.File):
    _tmp: Path | None = None
    _lines: list[tuple[int, str]] = []  # collect() sets the file's own
    _done: set[int] | None = None  # the `%t` lines this process has run in _tmp

    def tmp(self, lineno: int) -> Path:
        """`%t`: one fresh directory per .mlir file, shared by its RUN lines (which run in order). pytest-xdist may
        give a file's lines to different workers, so before line `lineno` this process first runs the file's earlier
        `%t` lines it has not run: they write what the later ones read."""
        if self._tmp is None:
            self._tmp, self._done = Path(tempfile.mkdtemp(prefix=f"filecheck-{self.path.stem}-")), set()
        for earlier, cmd in self._lines:
            if earlier < lineno and "%t" in cmd and earlier not in self._done:
                run_pipeline(cmd, self.path, self._tmp)
                self._done.add(earlier)
        self._done.add(lineno)
        return self._tmp

    def collect(self):
        self._lines = run_lines(self.path.read_text())
        if not self._lines:
            raise RunError(f"{self.path}: no `{RUN}` line")
        for lineno, cmd in self._lines:
            yield RunItem.from_parent(self, name=f"RUN@{lineno}", command=cmd, lineno=lineno)


class RunError(Exception):
    """A RUN pipeline failed; the message is the whole story (command, output, filecheck's report)."""


class RunItem(pytest.Item):
    def __init__(self, *, command: str, lineno: int, **kwargs):
        super().__init__(**kwargs)
        self.command, self.lineno = command, lineno

    def runtest(self):
        run_pipeline(self.command, self.path, self.parent.tmp(self.lineno) if "%t" in self.command else None)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, RunError):
            return f"{self.path}:{self.lineno}: RUN: {self.command}\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.lineno - 1, f"{self.path.name}:{self.lineno} RUN: {self.command}"


def run_pipeline(command: str, path: Path, tmp: Path | None = None) -> None:
    tokens = [t.replace("%s", str(path)).replace("%t", str(tmp)) for t in shlex.split(command)]
    stages: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            stages.append([])
        else:
            stages[-1].append(t)
    text = ""
    for argv in stages:
        expect_failure = argv[:1] == ["not"]
        argv = argv[1:] if expect_failure else argv
        merge_stderr = "2>&1" in argv
        argv = [a for a in argv if a != "2>&1"]
        if argv[:1] == ["irc-opt"]:
            code, out, err = run_irc_opt(argv[1:], text)
            if (code != 0) != expect_failure:
                want = "to fail" if expect_failure else "to succeed"
                raise RunError(
                    f"expected `{shlex.join(argv)}` {want}, exit code {code}\n--- stderr:\n{err}--- stdout:\n{out}"
                )
            if "Traceback (most recent call last)" in err:
                raise RunError(f"`{shlex.join(argv)}` printed a Python traceback:\n{err}")
            text = out + err if merge_stderr else out
        elif argv[:1] == ["filecheck"]:
            run_filecheck(argv[1:], text)
        elif argv[:1] == ["cat"]:
            text = "".join(Path(f).read_text() for f in argv[1:])
        else:
            raise RunError(f"unknown command {argv[:1]} (known: irc-opt, not, cat, filecheck)")


def run_irc_opt(argv: list[str], stdin_text: str) -> tuple[int, str, str]:
    from irc.tools.opt import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin_text.encode()), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def run_filecheck(argv: list[str], text: str) -> None:
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    with tempfile.NamedTemporaryFile("w", suffix=".out", delete=False) as f:
        f.write(text)
    try:
        opts = parse_argv_options(["filecheck", *argv])
        opts.input_file = f.name
        report = io.StringIO()
        with contextlib.redirect_stderr(report), contextlib.redirect_stdout(report):
            code = Matcher.from_opts(opts).run()
    finally:
        Path(f.name).unlink()
    if code != 0:
        raise RunError(f"filecheck failed:\n{report.getvalue()}\n--- input to filecheck:\n{text}")
