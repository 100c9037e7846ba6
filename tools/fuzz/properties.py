"""The fuzzer's properties, each raising FuzzFailure (a runnable snippet plus the .mlir of the first failing stage).

    check_targets(p)   irc on every target Options accepts equals eager (oracle.py decides "equals"); on the
                       triton target every kernel also compiles ahead of time for sm_90 (check_aot)
    check_passes(p)    every pass preserves the result of every graph irc imports (ir/check.py's
                       ResultCheck on the reference executors, as `irc-opt --verify-each`, on the
                       values the graph runs on: capture.py), and printing then parsing each stage
                       gives the same text, in both syntaxes
    check_program(p)   both

A program torch itself cannot compile (the aot_eager backend fails too) raises Inconclusive.
"""

import faulthandler
import io
import signal
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch


from .oracle import compare, compare_training, deterministic, gradients, ill_conditioned, meta_dtypes
from .programs import Program, describe, load, source


class FuzzFailure(AssertionError):
    """A property failed: `kind` says which, `stage`/`mlir` hold the IR of the first failing stage."""

    def __init__(
        self,
        kind: str,
        message: str,
        program: Program,
        stage: str | None = None,
        mlir: str | None = None,
        target: str | None = None,
        pass_: str | None = None,
    ):
        self.kind, self.message, self.program, self.stage, self.mlir, self.target = (
            kind,
            message,
            program,
            stage,
            mlir,
            target,
        )
        self.pass_ = pass_
        super().__init__(self.report())

    def report(self) -> str:
        opts = {"target": self.target} if self.target else {}
        parts = [
            f"irc-fuzz: {self.kind}: {self.message}",
            f"program: {describe(self.program)}",
            "# ---- runnable reproducer (python repro.py) ----",
            source(self.program, options=opts),
        ]
        if self.mlir:
            parts += [f"// ---- first failing stage: {self.stage} ----", self.mlir.rstrip()]
        if self.pass_:
            parts.append(
                f"// replay: save the IR above as stage.mlir; irc-opt stage.mlir -p '{self.pass_}' --verify-each"
            )
        return "\n".join(parts)


class Inconclusive(Exception):
    """torch cannot run or compile the program without irc either: not an irc bug."""


def targets() -> list[str]:
    """Every target in irc.options.TARGETS, read at run time (triton turns on its interpreter without a GPU).
    All are part of irc with required dependencies: one that does not import is an error, never skipped."""
    from irc import options

    for name in options.TARGETS:
        _import_target(name)
    return list(options.TARGETS)


def _import_target(name: str) -> None:
    import importlib
    import importlib.util

    module = importlib.import_module(f"irc.targets.{name}")
    if hasattr(module, "ensure_interpreter"):
        module.ensure_interpreter()
    for sub in ("runtime",):  # the part that runs a graph (triton: imports the triton package)
        if importlib.util.find_spec(f"irc.targets.{name}.{sub}") is not None:
            importlib.import_module(f"irc.targets.{name}.{sub}")


class Hang(BaseException):
    """No result in time. A BaseException, so that no `except Exception` in irc (irc-opt's main) swallows it."""


HARD_LIMIT = 3  # times the limit after which a hang inside native code ends the process
COMPILE_LIMIT_S = 60.0  # seconds of irc's own stages for one graph past which a compile counts as a failure


@contextmanager
def time_limit(seconds: float | None):
    """Raise Hang after `seconds` (main thread only; elsewhere no limit). Python's signal handler runs only between
    bytecodes, so a hang inside native code (LLVM's optimiser, a JITed loop) never sees it: after HARD_LIMIT times
    `seconds` faulthandler prints every thread's stack and ends the process, and the example is CORPUS/running.*
    (a campaign sat 15 minutes on one such example instead)."""
    import threading

    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise Hang(f"no result after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        faulthandler.dump_traceback_later(seconds * HARD_LIMIT, exit=True)
    except (OSError, ValueError, io.UnsupportedOperation):  # stderr is not a file: the soft limit only
        pass
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Graph:
    """One graph irc compiled: its name (graph000-forward) and stage texts from the dump."""

    name: str
    stages: dict[str, str]


def compile_on(p: Program, target: str, dump: Path) -> str | None:
    """Run p compiled by irc on `target` (stages dumped to `dump`) against eager: the difference, or None."""
    import irc

    loaded = load(p)
    torch._dynamo.reset()
    compiled = torch.compile(
        loaded.fn, backend=irc.backend, options={"target": target, "strict": True, "dump_dir": str(dump)}
    )
    run = compare_training if p.training else compare
    mark = irc.report.mark()
    try:
        diff = run(loaded.fn, compiled, loaded.make_inputs)
        if diff is None and any(x.dynamic for x in p.inputs) and _eager_runs(loaded, p.training, grow=1):
            diff = run(loaded.fn, compiled, lambda: loaded.make_inputs(grow=1))  # one graph serves every size
            diff = diff and f"called again with the dynamic dims one larger: {diff}"
    except Exception as e:
        if not _torch_compiles(p):
            raise Inconclusive(f"torch.compile with aot_eager fails too: {type(e).__name__}: {e}") from e
        raise FuzzFailure(
            "crash", f"irc on target {target!r} raised {_cause(e)}", p, *_first_stage(dump), target=target
        ) from e
    _check_compile_time(p, target, dump, irc.report.reports_since(mark).graphs)
    if diff is not None and not deterministic(loaded.fn, loaded.make_inputs, p.training):
        raise Inconclusive("eager gives different results on every run (a torch kernel reads uninitialised memory)")
    if diff is not None and not p.training and (dtypes := meta_dtypes(loaded.fn, loaded.make_inputs)) is not None:
        if compare(loaded.fn, compiled, loaded.make_inputs, dtypes) is None:
            raise Inconclusive(
                f"torch's meta functions type the outputs {dtypes}, eager's kernels otherwise; irc follows the meta"
            )
    if diff is not None:
        inputs = (lambda: loaded.make_inputs(grow=1)) if diff.startswith("called again") else loaded.make_inputs
        if ill_conditioned(loaded.fn, compiled, inputs, p.training):
            raise Inconclusive(
                "eager's own result moves past the tolerance where irc differs when its intermediate results "
                "move by one ulp: not determined to the dtype's precision (sin of a huge exp)"
            )
    if diff is not None and _as_aot_eager(p, compiled):
        raise Inconclusive(
            "torch.compile with aot_eager gives irc's results: the difference from eager is Dynamo's or "
            "AOT autograd's (an output aliasing an expanded input, regenerated by as_strided)"
        )
    return diff


def _check_compile_time(p: Program, target: str, dump: Path, graphs) -> None:
    """A graph whose compile (irc's own stages) took longer than COMPILE_LIMIT_S fails, though its result is right:
    a user's program must not stall in the compiler."""
    for g in graphs:
        if g.compile_seconds > COMPILE_LIMIT_S:
            stages = ", ".join(f"{k} {v:.1f} s" for k, v in g.stage_seconds.items())
            raise FuzzFailure(
                "slow-compile",
                f"graph {g.index} ({g.kind}) took {g.compile_seconds:.1f} s to compile on target {target!r} "
                f"(limit {COMPILE_LIMIT_S:g} s; {stages})",
                p,
                *_first_stage(dump),
                target=target,
            )


def _as_aot_eager(p: Program, compiled) -> bool:
    """Does irc's compiled fn give what torch.compile with aot_eager gives, on every size it was called with?"""
    loaded = load(p)
    reference = torch.compile(loaded.fn, backend="aot_eager")
    run = compare_training if p.training else compare
    sizes = [{}] + (
        [{"grow": 1}] if any(x.dynamic for x in p.inputs) and _eager_runs(loaded, p.training, grow=1) else []
    )
    try:
        return all(run(reference, compiled, lambda kw=kw: loaded.make_inputs(**kw)) is None for kw in sizes)
    except Exception:  # noqa: BLE001 - aot_eager cannot run it: no evidence either way
        return False


def _eager_runs(loaded, training: bool, **kw) -> bool:
    """Does eager run on these inputs (and, for a training program, its backward: `scatter_add` of a source
    larger than its index runs forward and raises in backward)?"""
    try:
        if training:
            gradients(loaded.fn, loaded.make_inputs(**kw))
        else:
            with torch.no_grad():
                loaded.fn(*loaded.make_inputs(**kw))
        return True
    except Exception:
        return False


def _cause(e: BaseException) -> str:
    inner = getattr(e, "inner_exception", None) or e.__cause__ or e
    return f"{type(inner).__name__}: {str(inner).strip().splitlines()[0] if str(inner).strip() else ''}"


def _torch_compiles(p: Program) -> bool:
    loaded = load(p)
    torch._dynamo.reset()
    try:
        compiled = torch.compile(loaded.fn, backend="aot_eager")
        (compare_training if p.training else compare)(loaded.fn, compiled, loaded.make_inputs)
        return True
    except Exception:
        return False


def _graphs(dump: Path) -> list[Graph]:
    out = []
    for folder in sorted(d for d in dump.iterdir() if d.is_dir()) if dump.exists() else []:
        stages = {f.stem.split("-", 1)[-1]: f.read_text() for f in sorted(folder.iterdir()) if f.suffix == ".mlir"}
        out.append(Graph(folder.name, stages))
    return out


def _first_stage(dump: Path) -> tuple[str | None, str | None]:
    for g in _graphs(dump):
        if "tensor" in g.stages:
            return f"tensor ({g.name})", g.stages["tensor"]
    return None, None


def check_targets(p: Program, *, only: list[str] | None = None) -> None:
    """irc equals eager on every target (or those in `only`)."""
    for target in only or targets():
        with tempfile.TemporaryDirectory(prefix="irc-fuzz-") as tmp:
            diff = compile_on(p, target, Path(tmp))
            if diff is not None:
                from .localize import localize

                stage, mlir = localize(p) or (
                    f"none: every stage agrees with the FX graph; the {target} target's code or runtime differs",
                    _first_stage(Path(tmp))[1],
                )
                raise FuzzFailure("mismatch", f"irc on target {target!r}: {diff}", p, stage, mlir, target=target)
            if target == "triton":
                check_aot(p, Path(tmp))


def check_aot(p: Program, dump: Path, arch: str = "sm_90") -> None:
    """Every kernel of every graph's mem stage (dumped under `dump`) compiles for `arch` with the blocks it is
    launched with, tl.dot templates too (targets/triton/aot.py): the interpreter would run a kernel Triton rejects."""
    from irc.dialects import ALL_DIALECTS
    from irc.ir import make_context
    from irc.ir.text import parse_module
    from irc.targets.triton import aot

    for g in _graphs(dump):
        if "mem" not in g.stages:
            continue
        module = parse_module(make_context(ALL_DIALECTS), g.stages["mem"])
        for kernel in aot.launchables(module, autotune=False):
            try:
                aot.compile_kernel(kernel, arch, kernel.configs[0])
            except aot.AotFailure as e:
                raise FuzzFailure(
                    "aot", f"{g.name}: {e}", p, f"mem ({g.name})", g.stages["mem"], target="triton"
                ) from e


def check_passes(p: Program) -> int:
    """Every pass keeps every graph's result (on the values the graph really runs on) and prints/parses
    stably; returns the number of passes checked."""
    from . import stages
    from .capture import capture

    try:
        graphs = capture(p)
    except Exception as e:
        if not _torch_compiles(p):
            raise Inconclusive(f"torch.compile with aot_eager fails too: {type(e).__name__}: {e}") from e
        raise FuzzFailure(
            "crash", f"importing the graphs (irc's decompositions and importer) raised {_cause(e)}", p
        ) from e
    checked = 0
    for g in graphs:
        try:
            checked += stages.run_checked(g.text, given=g.args or ())
        except stages.StageFailure as e:
            loaded = load(p)
            if e.kind == "pass-mismatch" and not deterministic(loaded.fn, loaded.make_inputs, p.training):
                raise Inconclusive(
                    "eager gives different results on every run (a torch kernel reads uninitialised memory)"
                ) from e
            raise FuzzFailure(e.kind, f"{g.name}: {e}", p, e.stage, e.mlir, pass_=e.pass_) from e
    return checked


def check_program(
    p: Program, *, passes: bool = True, only: list[str] | None = None, timeout: float | None = None
) -> None:
    with time_limit(timeout):
        try:
            check_targets(p, only=only)
            if passes:
                check_passes(p)
        except Hang as e:
            raise FuzzFailure("hang", str(e), p) from e
