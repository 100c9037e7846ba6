"""irc: an MLIR-style torch.compile backend on xDSL.

torch.compile(model, backend=irc.backend)        # or backend="irc" once installed
irc.explain(fn, *inputs)                         # compile, run, and report what irc did
"""

from . import lifetime
from .options import MODES, Options
from .report import CompileReport, GraphReport


def backend(gm, example_inputs, *, mode=None, options=None):
    """The torch.compile backend (see irc.dynamo.backend). torch._dynamo.reset() calls backend.reset."""
    # the first call imports the compiler (xDSL's many op classes): over a frozen heap, as a compile runs
    with lifetime.compiling():
        from .dynamo.backend import backend as _backend

    lifetime.arm(backend)
    return _backend(gm, example_inputs, mode=mode, options=options)


backend.reset = lifetime.release  # torch._dynamo.reset() releases irc's reports and in-memory caches (lifetime.py)


def explain(fn, *inputs, mode=None, options=None, dynamic=None) -> CompileReport:
    """Compile `fn` with irc afresh, run it on `inputs`, and return the report of every graph compiled."""
    import torch

    from . import report

    torch._dynamo.reset()
    start = report.mark()
    if mode and options:  # torch.compile takes one of them: options={"mode": ...} carries both
        if options.get("mode", mode) != mode:
            raise ValueError(f"irc: mode={mode!r} and options['mode']={options['mode']!r} disagree")
        options, mode = {**options, "mode": mode}, None
    torch.compile(fn, backend=backend, dynamic=dynamic, mode=mode, options=options)(*inputs)
    return report.reports_since(start)


__all__ = ["backend", "explain", "Options", "MODES", "CompileReport", "GraphReport"]
