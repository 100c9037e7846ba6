"""Elementwise op families: unary, binary (broadcasting, with tensors or Python scalars), where, casts."""

import torch
from hypothesis import strategies as st

from .builder import ALL_DTYPES, MAX_NUMEL, Builder
from .programs import DTYPE_NAMES, DTYPES, Op

UNARY = (
    "torch.neg",
    "torch.abs",
    "torch.exp",
    "torch.relu",
    "torch.tanh",
    "torch.sigmoid",
    "torch.log",
    "torch.sqrt",
    "torch.rsqrt",
    "torch.sin",
    "torch.cos",
    "torch.floor",
    "torch.ceil",
    "torch.round",
    "torch.trunc",
    "torch.sign",
    "torch.reciprocal",
    "torch.erf",
    "F.gelu",
    "F.silu",
    "F.softplus",
    "torch.square",
    "torch.expm1",
    "torch.log1p",
    "torch.atan",
    "torch.asin",
    "torch.sinh",
    "torch.log2",
    "torch.exp2",
    "torch.frac",
    "F.hardtanh",
    "F.elu",
    "F.hardswish",
    "F.hardsigmoid",
    "F.leaky_relu",
    "F.mish",
    "torch.logical_not",
    "torch.isnan",
    "torch.isinf",
    "torch.bitwise_not",
    "torch.nan_to_num",
    "torch.signbit",
    "torch.erfinv",
    "torch.lgamma",
    "torch.digamma",
)
UNARY_ARGS = {
    "F.gelu": ("", ", approximate='tanh'"),
    "F.leaky_relu": ("", ", 0.2"),
    "torch.round": ("", ", decimals=1"),
    "F.hardtanh": ("", ", -0.5, 2.0"),
    "F.softplus": ("", ", beta=2.0, threshold=1.0"),
}
BINARY = (
    "torch.add",
    "torch.mul",
    "torch.sub",
    "torch.div",
    "torch.maximum",
    "torch.minimum",
    "torch.eq",
    "torch.lt",
    "torch.ge",
    "torch.ne",
    "torch.logical_and",
    "torch.logical_or",
    "torch.logical_xor",
    "torch.pow",
    "torch.remainder",
    "torch.fmod",
    "torch.atan2",
    "torch.bitwise_and",
    "torch.bitwise_or",
    "torch.bitwise_xor",
    "torch.floor_divide",
    "torch.hypot",
    "torch.copysign",
    "torch.fmax",
    "torch.fmin",
    "torch.xlogy",
)
BINARY_ARGS = {
    "torch.add": ("", ", alpha=2"),
    "torch.sub": ("", ", alpha=0.5"),
    "torch.div": ("", ", rounding_mode='floor'", ", rounding_mode='trunc'"),
}
OPERATORS = ("+", "*", "-", "/", "<", "==", "**", "//", "%", "&", "|")


def unary(b: Builder) -> Op | None:
    f = b.draw(st.sampled_from(UNARY))
    extra = b.draw(st.sampled_from(UNARY_ARGS.get(f, ("",))))
    x = b.pick()
    return Op(f.split(".")[-1], (x,), f"{f}({{0}}{extra})")


def binary(b: Builder) -> Op | None:
    f = b.draw(st.sampled_from(BINARY))
    extra = b.draw(st.sampled_from(BINARY_ARGS.get(f, ("",))))
    x = b.pick()
    t = b.val(x)
    if b.draw(st.integers(0, 3)) == 0:  # a Python scalar operand
        return Op(f.split(".")[-1] + "_scalar", (x,), f"{f}({{0}}, {b.scalar(t)!r}{extra})")
    same = b.draw(st.integers(0, 3)) > 0  # mostly the same dtype; otherwise torch promotes
    y = b.broadcast_partner(t, _name(t) if same else None)
    return Op(f.split(".")[-1], (x, y), f"{f}({{0}}, {{1}}{extra})")


def operator(b: Builder) -> Op | None:
    """Python operators, with the scalar on either side."""
    o = b.draw(st.sampled_from(OPERATORS))
    x = b.pick()
    t = b.val(x)
    if b.draw(st.booleans()):
        s = b.scalar(t)
        return Op(f"op{o}", (x,), f"({s!r} {o} {{0}})" if b.draw(st.booleans()) else f"({{0}} {o} {s!r})")
    y = b.broadcast_partner(t, _name(t))
    return Op(f"op{o}", (x, y), f"({{0}} {o} {{1}})")


def where(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    c = b.pick(lambda u: u.dtype == torch.bool and _fits(t, u))
    y = b.broadcast_partner(t, _name(t))
    if c is None or b.draw(st.booleans()):
        s = b.scalar(t)
        return Op("where", (x, y), f"torch.where({{0}} > {s!r}, {{0}}, {{1}})")
    return Op("where", (c, x, y), "torch.where({0}, {1}, {2})")


def cast(b: Builder) -> Op | None:
    x = b.pick()
    dt = b.draw(st.sampled_from(ALL_DTYPES[7:] + ("f32",)))
    return Op("to", (x,), f"{{0}}.to({DTYPES[dt]})")


def clamp(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    lo, hi = sorted((b.scalar(t), b.scalar(t)))
    form = b.draw(st.sampled_from(("both", "min", "max", "tensor")))
    if form == "tensor":
        y = b.broadcast_partner(t, _name(t))
        return Op("clamp", (x, y), "torch.clamp({0}, min={1})")
    args = {"both": f"min={lo!r}, max={hi!r}", "min": f"min={lo!r}", "max": f"max={hi!r}"}[form]
    return Op("clamp", (x,), f"torch.clamp({{0}}, {args})")


def _name(t) -> str:
    return DTYPE_NAMES.get(t.dtype, "f32")


def _fits(t, u) -> bool:
    try:
        return torch.broadcast_shapes(t.shape, u.shape) is not None and u.numel() <= MAX_NUMEL
    except RuntimeError:
        return False


FAMILIES = (
    ("unary", unary, 6),
    ("binary", binary, 6),
    ("operator", operator, 2),
    ("where", where, 1),
    ("cast", cast, 1),
    ("clamp", clamp, 1),
)
