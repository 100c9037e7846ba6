"""The `tn` dialect: value-semantic tensor ops, one per core-aten concept. TensorDialect is the only op list."""

import inspect

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation

from . import (
    attention,
    bounds,
    creation,
    elementwise,
    fallback,
    indexing,
    lapack,
    lapack_check,
    linalg,
    nn,
    norm,
    pooling,
    quant,
    reductions,
    shape,
    sorting,
    special,
)

# Taken before the star imports below: they rebind `shape` (and any helper name a module imports) in this package.
MODULES = (
    elementwise,
    reductions,
    sorting,
    shape,
    creation,
    fallback,
    linalg,
    lapack,
    lapack_check,
    nn,
    pooling,
    norm,
    indexing,
    bounds,
    special,
    attention,
    quant,
)

from .attention import *  # noqa: F401,F403
from .bounds import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .fallback import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .lapack import *  # noqa: F401,F403
from .lapack_check import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .quant import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403


def _ops_of(module) -> list[type[IRDLOperation]]:
    """The concrete tn ops a module defines, in source order (abstract bases have no `tn.` name).
    A module's namespace keeps definition order, so no source needs reading (inspect.getsourcelines would
    read every dialect file in every process's first compile)."""
    return [
        cls
        for cls in vars(module).values()
        if inspect.isclass(cls)
        and cls.__module__ == module.__name__
        and issubclass(cls, IRDLOperation)
        and str(getattr(cls, "name", "")).startswith("tn.")
    ]


TensorDialect = Dialect("tn", [op for m in MODULES for op in _ops_of(m)])
