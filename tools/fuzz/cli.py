"""irc-fuzz: fuzz the whole compiler for a time budget; shrink each failure and save it.

    irc-fuzz --budget 600                      programs, training graphs and irc-opt inputs, 10 minutes
    irc-fuzz --budget 3600 --seed 7 --property program --target cpu
    irc-fuzz --corpus .irc-fuzz                where failures go (Hypothesis' example database + reports)

Each property runs in rounds of Hypothesis examples until the budget is spent. A failure is shrunk
to a minimal program and written to CORPUS/failures/ as a runnable Python reproducer (with the .mlir
of the first failing stage beside it); Hypothesis' database under CORPUS/examples replays every saved
failure first on the next run. Failures matching an open known bug (tools/fuzz/known.py) are counted,
not re-reported. Exit code 0 when nothing new failed, 1 otherwise.
"""

import argparse
import hashlib
import faulthandler
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

from hypothesis import Phase, Verbosity, given, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from .profiles import SUPPRESS

PROPERTIES = ("program", "training", "front-door")
ROUND = 40  # examples per Hypothesis run; a new seed each round


def signature(f) -> str:
    """What distinguishes one bug from another: kind, target, and the message without numbers."""
    msg = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?|\[[^\]]*\]|graph\w+-\w+|%\w+", "#", f.message)
    return f"{f.kind}: {msg[:160]}"


class Campaign:
    def __init__(self, args):
        self.args = args
        self.start = time.monotonic()
        self.deadline = self.start + args.budget
        self.stats: Counter = Counter()
        self.known: Counter = Counter()
        self.first_seen: dict[str, float] = {}
        self.reported: set[str] = set()
        self.failing = False
        self.last_progress = 0.0
        self.corpus = Path(args.corpus)
        self.db = DirectoryBasedExampleDatabase(self.corpus / "examples")
        self.targets = args.target

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    # -- one example ------------------------------------------------------------------------------
    def running(self, suffix: str, text) -> None:
        """The example about to run, in CORPUS/running.<suffix>: a fault that kills the whole process (a kernel
        reading outside its memory) leaves the program that caused it there, and faulthandler its stack."""
        self.corpus.mkdir(parents=True, exist_ok=True)
        (self.corpus / f"running.{suffix}").write_text(text())

    def guard(self):
        self.stats["examples"] += 1
        self.progress()
        if time.monotonic() > self.deadline and not self.failing and self.stats["examples"] > 1:
            reject()  # the budget is spent: let the round finish quickly (a run judges one example at least)

    def failed(self, f):
        from .known import known

        k = known(f) if hasattr(f, "program") else None
        if k is not None:
            self.known[k.name] += 1
            reject()
        sig = signature(f)
        if sig in self.reported:
            self.stats["repeats"] += 1
            reject()
        self.first_seen.setdefault(sig, self.elapsed())
        self.failing = True
        raise f

    def program_body(self, p):
        from .programs import source
        from .properties import FuzzFailure, Inconclusive, check_program

        self.guard()
        self.running("py", lambda: source(p))
        try:
            check_program(p, passes=not self.args.no_passes, only=self.targets, timeout=self.args.timeout)
            self.stats["ok"] += 1
        except Inconclusive:
            self.stats["inconclusive"] += 1
            reject()
        except FuzzFailure as f:
            self.failed(f)

    def front_door_body(self, text, flags):
        from .frontdoor import FrontDoorFailure, check_front_door

        self.guard()
        self.running("mlir", lambda: f"// irc-opt {' '.join(flags)}\n{text}")
        try:
            check_front_door(text, flags)
            self.stats["ok"] += 1
        except FrontDoorFailure as f:
            self.failed(f)

    # -- rounds -----------------------------------------------------------------------------------
    def test_for(self, prop: str):
        """One named function per property: Hypothesis keys its database by the function, so each replays its own."""
        from .frontdoor import FLAGS, mutated
        from .strategies import programs, training_programs

        def front_door_property(text, flags):
            self.front_door_body(text, flags)

        def program_property(p):
            self.program_body(p)

        def training_property(p):
            self.program_body(p)

        if prop == "front-door":
            return given(mutated(), st.sampled_from(FLAGS))(front_door_property)
        if prop == "training":
            return given(training_programs(max_ops=self.args.max_ops))(training_property)
        return given(programs(max_ops=self.args.max_ops))(program_property)

    def run_round(self, prop: str, i: int) -> None:
        phases = (
            [Phase.generate, Phase.shrink]
            if i >= len(self.args.property)
            else [Phase.reuse, Phase.generate, Phase.shrink]
        )
        conf = settings(
            database=self.db,
            max_examples=ROUND,
            deadline=None,
            phases=phases,
            suppress_health_check=SUPPRESS,
            verbosity=Verbosity.quiet,
            print_blob=False,
            report_multiple_bugs=True,
        )
        test = conf(seed(self.args.seed * 100003 + i)(self.test_for(prop)))  # settings after seed: keep the database
        self.failing = False
        try:
            test()
        except BaseException as e:  # noqa: BLE001 - Hypothesis raises the failure(s) it shrank, or a group of them
            if isinstance(e, KeyboardInterrupt):
                raise
            for f in _failures(e):
                self.report(f)
            if not _failures(e) and not (type(e).__name__ == "Unsatisfiable" and time.monotonic() > self.deadline):
                self.stats["errors"] += 1
                print(f"\nirc-fuzz: the {prop} round stopped: {type(e).__name__}: {e}", file=sys.stderr)

    def report(self, f) -> None:
        sig = signature(f)
        if sig in self.reported:
            return
        self.reported.add(sig)
        found = self.first_seen.get(sig, self.elapsed())
        text = f.report()
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        folder = self.corpus / "failures"
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{len(self.reported):03d}-{f.kind}-{digest}"
        if hasattr(f, "program"):
            from .programs import source

            head = _comment("#", f"{sig}\nfound after {found:.0f} s")  # a message of several lines stays a comment
            stem.with_suffix(".py").write_text(
                head + source(f.program, options={"target": f.target} if f.target else None)
            )
            if f.mlir:
                stem.with_suffix(".mlir").write_text(_comment("//", f.stage) + f.mlir)
        else:
            stem.with_suffix(".mlir").write_text(_comment("//", f"irc-opt {' '.join(f.flags)}: {f.message}") + f.text)
        print(
            f"\n{'=' * 100}\nFAILURE {len(self.reported)} (first seen after {found:.0f} s; saved as {stem}.*)\n{text}\n",
            file=sys.stderr,
        )

    def run(self) -> int:
        from .properties import targets

        run = targets()
        self.targets = self.targets or run
        if bad := [t for t in self.targets if t not in run]:
            print(f"irc-fuzz: error: unknown target(s) {', '.join(bad)}; irc accepts {', '.join(run)}", file=sys.stderr)
            return 2
        if "front-door" in self.args.property:
            from .frontdoor import seeds

            seeds()  # warm up (it runs irc-opt on every seed) before the clock starts
        self.start = time.monotonic()
        self.deadline = self.start + self.args.budget
        print(
            f"irc-fuzz: properties {', '.join(self.args.property)}; targets {', '.join(self.targets)}; "
            f"budget {self.args.budget:g} s; seed {self.args.seed}; corpus {self.corpus}",
            file=sys.stderr,
        )
        i = 0
        while time.monotonic() < self.deadline:
            self.run_round(self.args.property[i % len(self.args.property)], i)
            i += 1
        self.progress(final=True)
        return self.summary()

    def progress(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last_progress < (0.5 if sys.stderr.isatty() else 15):
            return
        self.last_progress = now
        done = min(1.0, (now - self.start) / max(self.args.budget, 1e-9))
        bar = "#" * int(done * 30) + "-" * (30 - int(done * 30))
        s = self.stats
        line = (
            f"[{bar}] {now - self.start:5.0f}/{self.args.budget:g} s  {s['examples']} examples  ok {s['ok']}  "
            f"skipped {s['inconclusive']}  known {sum(self.known.values())}  failures {len(self.reported)}  "
            f"({s['examples'] / max(now - self.start, 1e-9):.1f}/s)"
        )
        print(
            ("\r" + line) if sys.stderr.isatty() and not final else line,
            end="" if sys.stderr.isatty() and not final else "\n",
            file=sys.stderr,
        )

    def summary(self) -> int:
        for name, n in self.known.items():
            print(f"irc-fuzz: known bug {name}: hit {n} times (tools/fuzz/known.py)", file=sys.stderr)
        for sig in sorted(self.reported, key=lambda s: self.first_seen.get(s, 0)):
            print(f"irc-fuzz: failure after {self.first_seen.get(sig, 0):.0f} s: {sig}", file=sys.stderr)
        return 1 if self.reported else 0


def _failures(e: BaseException) -> list:
    from .frontdoor import FrontDoorFailure
    from .properties import FuzzFailure

    if isinstance(e, (FuzzFailure, FrontDoorFailure)):
        return [e]
    inner = [getattr(e, "__cause__", None), *getattr(e, "exceptions", ())]
    return [f for sub in inner if sub is not None for f in _failures(sub)]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="irc-fuzz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--budget", type=float, default=300, help="seconds to fuzz (default 300)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first round (each round adds one)")
    p.add_argument(
        "--property", action="append", choices=PROPERTIES, help="what to fuzz (repeatable; default all three)"
    )
    p.add_argument(
        "--target",
        action="append",
        help="irc targets to compare with eager (default: every target irc.options accepts)",
    )
    p.add_argument("--corpus", default=".irc-fuzz", help="where failures are saved (default .irc-fuzz)")
    p.add_argument("--max-ops", type=int, default=5, help="ops per program (default 5)")
    p.add_argument("--timeout", type=float, default=120, help="seconds one example may take before it counts as a hang")
    p.add_argument("--no-passes", action="store_true", help="skip the per-pass property (compare with eager only)")
    return p


def _comment(mark: str, text: str) -> str:
    """`text` as comment lines of a Python (#) or MLIR (//) file."""
    return "".join(f"{mark} {line}\n" for line in str(text).splitlines())


def main(argv=None) -> int:
    import warnings

    args = parser().parse_args(argv)
    if not faulthandler.is_enabled():  # a segmentation fault prints the Python stack (the example: CORPUS/running.*)
        try:
            faulthandler.enable()
        except (OSError, ValueError):  # stderr is not a file (captured): the running example is still on disk
            pass
    args.property = args.property or list(PROPERTIES)
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("irc").setLevel(logging.ERROR)
    ours = "IRC_PROGRESS" not in os.environ
    os.environ.setdefault("IRC_PROGRESS", "0")  # no per-compile progress lines (irc/log.py) between the campaign's own
    try:
        return Campaign(args).run()
    except KeyboardInterrupt:
        print("\nirc-fuzz: interrupted", file=sys.stderr)
        return 130
    finally:
        if ours:
            os.environ.pop("IRC_PROGRESS", None)


if __name__ == "__main__":
    sys.exit(main())
