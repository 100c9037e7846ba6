"""Reductions in Triton: identities (what masked lanes hold), lane-wise combines for looped rows, and the
reduction of [XBLOCK, RBLOCK] lanes over axis 1 through the prelude's helpers."""

from irc.ir.index_math import INF

_INT_RANGE = {
    "tl.int8": (-(2**7), 2**7 - 1),
    "tl.int16": (-(2**15), 2**15 - 1),
    "tl.int32": (-(2**31), 2**31 - 1),
    "tl.int64": (-(2**63), 2**63 - 1),
    "tl.uint8": (0, 255),
    "tl.uint16": (0, 2**16 - 1),
    "tl.uint32": (0, 2**32 - 1),
    "tl.uint64": (0, 2**64 - 1),
    "tl.int1": (0, 1),
}


def identity_value(kind: str, t: str) -> str:
    lo, hi = _INT_RANGE.get(t, (-INF, INF))
    value = {"sum": 0, "prod": 1, "any": 0, "all": 1, "max": lo, "argmax": lo, "min": hi, "argmin": hi}[kind]
    return f'float("{value}")' if isinstance(value, float) else str(value)


def identity(kind: str, t: str) -> str:
    """The reduction's identity as a [1, 1] tensor of the reduced type (masked lanes hold it)."""
    return f"tl.full([1, 1], {identity_value(kind, t)}, {t})"


# kind -> the lane-wise combine of an accumulator and a value (looped rows)
FLOAT_COMBINE = {"sum": "{a} + {b}", "prod": "{a} * {b}", "max": "_maximumf({a}, {b})", "min": "_minimumf({a}, {b})"}
INT_COMBINE = {
    "sum": "{a} + {b}",
    "prod": "{a} * {b}",
    "max": "tl.maximum({a}, {b})",
    "min": "tl.minimum({a}, {b})",
    "any": "{a} | {b}",
    "all": "{a} & {b}",
}


def lanes_reduce(kind: str, t: str, x: str, idx: str | None, is_float: bool) -> str:
    """The reduction of [XBLOCK, RBLOCK] lanes over axis 1 (keeping it), through the reductions Triton (and its
    interpreter, with numpy) runs fastest (prelude.py); argmax/argmin take the first position `idx` of the extreme."""
    if kind == "sum":
        return f"_rsum({x})"
    if kind in ("max", "min"):
        return f"_r{kind}({x})" if is_float else f"_ri{kind}({x})"
    if kind in ("argmax", "argmin"):
        return f"_r{kind}({x}, {idx})"
    if kind == "any":
        return f"(_rimax({x}.to(tl.int8)) > 0)"
    if kind == "all":
        return f"(_rimin({x}.to(tl.int8)) > 0)"
    return f"tl.reduce({x}, 1, _mul, keep_dims=True)"
