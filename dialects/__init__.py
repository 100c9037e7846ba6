"""irc's dialects: declarations only (ops, attributes, verifiers)."""

from .loop import LoopDialect
from .memory import MemDialect
from .tensor import TensorDialect

ALL_DIALECTS = (TensorDialect, LoopDialect, MemDialect)
