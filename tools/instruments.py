"""irc-opt's pass instruments: IR printing around passes, numbered dumps, timing and statistics.

Each is an irc.ir.passes.Instrument. Printing goes to stderr, as mlir-opt's does, under MLIR's
headers (`// -----// IR Dump After cse //----- //`); the timing and statistics reports are
printed once at the end, summed over every module of the input (split chunks, model graphs).
"""

import time
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TextIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.ir.passes import Instrument, pass_label
from irc.ir.rules import count_matches

Render = Callable[[ModuleOp], str]
RULE = "===" + "-" * 73 + "==="


def _banner(title: str) -> str:
    return f"{RULE}\n{('... ' + title + ' ...').center(79).rstrip()}\n{RULE}\n"


class PrintIR(Instrument):
    """--print-ir-before(-all), --print-ir-after(-all), --print-ir-after-change, --print-ir-after-failure."""

    def __init__(
        self,
        render: Render,
        stream: TextIO,
        *,
        before: Collection[str] = (),
        after: Collection[str] = (),
        before_all: bool = False,
        after_all: bool = False,
        after_change: bool = False,
        after_failure: bool = False,
    ):
        self.render, self.stream = render, stream
        self.before_names, self.after_names = set(before), set(after)
        self.before_all, self.after_all, self.after_change, self.after_failure = (
            before_all,
            after_all,
            after_change,
            after_failure,
        )
        self._previous: str | None = None

    def _emit(self, when: str, p: ModulePass, text: str, failed: bool = False) -> None:
        self.stream.write(
            f"// -----// IR Dump {when} {pass_label(p)}{' Failed' if failed else ''} //----- //\n{text}\n"
        )

    def _wants_after(self, p: ModulePass) -> bool:
        # --print-ir-after-change alone means every pass; with a selection, it narrows the selection
        selected = self.after_all or p.name in self.after_names
        return selected or (self.after_change and not self.after_names)

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        text = self.render(module) if (self.before_all or p.name in self.before_names or self.after_change) else None
        self._previous = text
        if self.before_all or p.name in self.before_names:
            self._emit("Before", p, text)

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        if not self._wants_after(p):
            return
        text = self.render(module)
        if self.after_change and text == self._previous:
            return
        self._emit("After", p, text)

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        if self.after_failure:
            self._emit("After", p, self.render(module), failed=True)


class DumpDir(Instrument):
    """--dump-dir DIR: `00-input.mlir`, then one numbered file per pass (`01-cse.mlir`, ...)."""

    def __init__(self, folder: Path, render: Render):
        self.folder, self.render, self.n = folder, render, 0
        self.written: list[Path] = []

    def _write(self, name: str, header: str, module: ModuleOp) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.n:02d}-{name}.mlir"
        path.write_text(f"// {header}\n{self.render(module)}")
        self.written.append(path)

    def start(self, module: ModuleOp) -> None:
        self._write("input", "irc-opt: the input, before any pass", module)

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        self.n += 1
        self._write(p.name, f"irc-opt: after pass {self.n} '{pass_label(p)}'", module)

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        self.n += 1
        self._write(f"{p.name}.failed", f"irc-opt: after pass {self.n} '{pass_label(p)}', which failed", module)


class Timing(Instrument):
    """--timing: wall time per pass (in pipeline order), plus parsing, verifying and printing."""

    def __init__(self):
        self.rows: dict[tuple[int, str], float] = {}  # (position, label) -> seconds, summed over modules
        self.other: Counter = Counter()  # (parse), (verifier), (output)
        self.position, self._t0 = 0, 0.0

    def start(self) -> None:
        self.position = 0

    def add(self, what: str, seconds: float) -> None:
        self.other[what] += seconds

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        self._t0 = time.perf_counter()

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        key = (self.position, pass_label(p))
        self.rows[key] = self.rows.get(key, 0.0) + time.perf_counter() - self._t0
        self.position += 1

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        self.after(p, module)  # the time of a failing pass counts too

    def report(self, stream: TextIO) -> None:
        items = [(label, s) for (_, label), s in sorted(self.rows.items())] + sorted(self.other.items())
        total = sum(s for _, s in items) or 1e-12
        stream.write(_banner("Execution time report"))
        stream.write(f"  Total Execution Time: {total:.4f} seconds\n\n  ----Wall Time----  ----Name----\n")
        for label, s in [*items, ("Total", total)]:
            stream.write(f"  {s:8.4f} ({100 * s / total:5.1f}%)  {label}\n")


class Statistics(Instrument):
    """--statistics: per pass, the ops before and after and how often each rewrite rule or pattern fired."""

    def __init__(self):
        self.rows: dict[tuple[int, str], list] = {}  # (position, label) -> [ops before, ops after, Counter]
        self.position = 0
        self._scope = None

    def start(self) -> None:
        self.position = 0

    @staticmethod
    def _ops(module: ModuleOp) -> int:
        return sum(1 for _ in module.walk()) - 1

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        row = self.rows.setdefault((self.position, pass_label(p)), [0, 0, Counter()])
        row[0] += self._ops(module)
        self._scope = count_matches()
        self._counts = self._scope.__enter__()

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        self._scope.__exit__(None, None, None)
        row = self.rows[(self.position, pass_label(p))]
        row[1] += self._ops(module)
        row[2].update(self._counts)
        self.position += 1

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        self.after(p, module)  # what a failing pass matched still counts

    def report(self, stream: TextIO) -> None:
        stream.write(_banner("Pass statistics report"))
        for (_, label), (ops_before, ops_after, counts) in sorted(self.rows.items()):
            stream.write(f"'{label}'\n  (S) {ops_before:6d} ops-before - operations in the module before the pass\n")
            stream.write(f"  (S) {ops_after:6d} ops-after  - operations in the module after the pass\n")
            for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
                stream.write(f"  (S) {n:6d} {name} - rewrites\n")
