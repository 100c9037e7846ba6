"""irc's dialects: declarations only (ops, attributes, verifiers)."""

from .tensor import TensorDialect

ALL_DIALECTS = (TensorDialect,)
