"""Which math ops of a nest body are costly: what fusion and the emitters take care not to compute more often than
needed (exp, log, tanh, erf, ...), against those of about one instruction."""

from xdsl.ir import Operation

CHEAP_MATH = frozenset(
    f"math.{n}"
    for n in ("absf", "absi", "floor", "ceil", "trunc", "round", "roundeven", "sqrt", "copysign", "fma", "ctpop")
)


def costly_math(op: Operation) -> bool:
    """A math op of more than about one instruction."""
    return op.name.startswith("math.") and op.name not in CHEAP_MATH
