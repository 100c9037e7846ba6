"""The CPU runtime's entry: `Program(module, argspecs, mode=...)(args) -> results` for a mem-stage module.

A Program is an Executor (executor.py: contexts, argument binding and checks, the steps, results) of
a graph compiled once for it (compiled.py: specialised, emitted, JITed kernels, the launch plan).
Modes: under reduce-overhead a static graph's steps also run as JITed launchers (launcher.py: a call
is then the allocation of its outputs and one or a few ctypes calls); max-autotune first measures
each launch's variants (autotune.tune returns the choices) and builds again with the fastest, when that build
beats the default one as a whole call (autotune.whole_program).
`python_steps` and `mode_notes` say what a call runs, `extern_paths` which library path each extern
problem took (filled as calls decide them). `graph` (the report's index) names the profiler events.
"""

from __future__ import annotations

import time

from . import autotune, launcher
from .compiled import Choices, Compiled
from .executor import Executor, InputMismatch


class Program(Executor):
    """`Program(module, argspecs)(args) -> results` for a mem-stage module (see targets/args.ArgSpec)."""

    def __init__(self, module, args, *, cache: bool = True, entry: str = "main", lanes: int | None = None,
                 mode: str = "default", graph: int = -1, key: str | None = None):  # fmt: skip
        t0 = time.perf_counter()
        compiled = Compiled(module, args, entry=entry, lanes=lanes, mode=mode, key=key)
        compiled.build(cache=cache)
        from torch._subclasses.fake_tensor import unset_fake_temporarily

        with unset_fake_temporarily():  # compiling runs under Dynamo's fake mode: the arena must be real
            super().__init__(compiled, f"graph{graph}" if graph >= 0 else "")
            tune_notes = []
            if mode == "max-autotune" and compiled.static and (compiled.kernels or compiled.launch_plan):
                try:
                    choices, tune_notes = autotune.tune(compiled, self, cache)
                except Exception as e:  # noqa: BLE001 - measuring failed: the default variants stay
                    choices, tune_notes = None, [f"autotune failed ({type(e).__name__}: {e}); default variants"]
                if choices is not None:  # other widths, tiles or thresholds than the first build's, if faster as a whole
                    make = lambda: Compiled(module, args, entry=entry, lanes=lanes, mode=mode)  # noqa: E731
                    keep, note = autotune.whole_program(self, choices, cache, make)
                    tune_notes.append(note)
                    if keep:
                        self.rebuild(choices, cache=cache)
        error = compiled.launcher_error or self.launcher_error
        self.mode_notes = ([error] if error else launcher.describe(compiled)) + tune_notes
        self.seconds = time.perf_counter() - t0

    def rebuild(self, choices: Choices | None = None, *, cache: bool = True) -> None:
        """Compile again (in `choices`' variants when given); calls then run the new code."""
        self.compiled.build(choices, cache=cache)
        self.reset()

    # what the compile report and the tests read
    @property
    def g(self):
        return self.compiled.g

    @property
    def launches(self):
        return self.compiled.launches

    @property
    def kernels(self) -> int:
        return self.compiled.kernels

    @property
    def cache_hit(self) -> bool:
        return self.compiled.cache_hit

    @property
    def fallbacks(self) -> list[tuple[str, str]]:
        return self.compiled.fallbacks

    @property
    def extern_paths(self) -> dict[str, str]:
        return self.compiled.extern_paths

    @property
    def llvm_ir(self) -> str:
        return self.compiled.llvm_ir


__all__ = ["Program", "InputMismatch"]
