"""irc's dialects: declarations only (ops, attributes, verifiers)."""

from .loop import LoopDialect
from .tensor import TensorDialect

ALL_DIALECTS = (TensorDialect, LoopDialect)
