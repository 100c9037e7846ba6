"""The pass runner: apply ModulePasses in order, verify after each, time each, and let instruments watch.

An Instrument (MLIR's PassInstrumentation) sees the module before and after every pass, and when
a pass raises or leaves invalid IR; `before` hooks run in list order, `after` and `failed` hooks
in reverse, so the last instrument in the list sits closest to the pass. irc-opt's IR printing,
dumps, timing, statistics and --verify-each are instruments; so is the backend's `verify` option.
"""

import contextvars
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

Dump = Callable[[str, ModuleOp], None]
Verify = Callable[[ModuleOp], None]
T = TypeVar("T")


def on_fresh_stack(fn: Callable[[], T]) -> T:
    """fn() on a thread of its own (in the caller's contextvars), the caller waiting for it; its exception raised.

    CPython 3.11 keeps the interpreter's frames in 16 KB chunks and frees a chunk as soon as its first frame returns:
    a call that lands on a chunk's start maps and unmaps memory on every call. Where torch.compile calls the backend,
    100 or more frames deep and wherever the user called the model from, xDSL's rewrite loops landed there by chance
    (an int8 graph's simplify-loop 2.5-3x slower than with one frame more above it). A thread starts with an empty stack, so the passes
    run at the same shallow depth whoever calls them."""
    box: dict = {}
    context = contextvars.copy_context()

    def target():
        try:
            box["value"] = context.run(fn)
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=target, name="irc-passes", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class PassTiming:
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, dt: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + dt


class Instrument:
    """Hooks around each pass; override the ones you need."""

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        pass

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        pass

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        """The pass raised, or the verifier rejected what it left (`error`); the exception propagates after the hooks."""


def pass_label(p: ModulePass) -> str:
    """The pass as it is written in a pipeline, options included: `fuse-loops{max-body-ops=8}`. A field that is no
    option (a target's rule, declared compare=False) has no text and is left out."""
    if not hasattr(p, "spec"):
        return p.name
    if rules := [f.name for f in dataclasses.fields(p) if not f.compare]:
        p = dataclasses.replace(p, **dict.fromkeys(rules))
    return str(p.spec())


def run_passes(
    ctx: Context,
    module: ModuleOp,
    passes: Sequence[ModulePass],
    *,
    verify: bool | Verify = True,
    dump: Dump | None = None,
    timing: PassTiming | None = None,
    instruments: Sequence[Instrument] = (),
) -> ModuleOp:
    """Apply `passes` to `module` in place. `verify`: True (module.verify), False, or a function that raises."""
    check = (lambda m: m.verify()) if verify is True else (verify or None)
    for p in passes:
        for i in instruments:
            i.before(p, module)
        t0 = time.perf_counter()
        try:
            p.apply(ctx, module)
            t1 = time.perf_counter()
            if check is not None:
                check(module)
        except Exception as e:
            for i in reversed(instruments):
                i.failed(p, module, e)
            raise
        if timing is not None:
            timing.add(p.name, t1 - t0)
            if check is not None:
                timing.add("(verifier)", time.perf_counter() - t1)
        for i in reversed(instruments):
            i.after(p, module)
        if dump is not None:
            dump(p.name, module)
    return module
