"""irc: an MLIR-style torch.compile backend on xDSL.

    torch.compile(model, backend=irc.backend)        # or backend="irc" once installed
    irc.explain(fn, *inputs)                         # compile, run, and report what irc did
"""

from .options import MODES, Options
from .report import CompileReport, GraphReport


def backend(gm, example_inputs, *, mode=None, options=None):
    """The torch.compile backend (see irc.frontend.backend)."""
    from .frontend.backend import backend as _backend

    return _backend(gm, example_inputs, mode=mode, options=options)


def explain(fn, *inputs, mode=None, options=None, dynamic=None) -> CompileReport:
    """Compile `fn` with irc afresh, run it on `inputs`, and return the report of every graph compiled."""
    import torch

    from . import report

    torch._dynamo.reset()
    start = report.mark()
    kwargs = {"mode": mode} if mode else {}
    if options:
        kwargs["options"] = options
    torch.compile(fn, backend=backend, dynamic=dynamic, **kwargs)(*inputs)
    return report.reports_since(start)


__all__ = ["backend", "explain", "Options", "MODES", "CompileReport", "GraphReport"]
