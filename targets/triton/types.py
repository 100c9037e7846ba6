"""Element types in Triton: what a body value computes in, what an element is in memory.

As on the CPU target, f16 and bf16 compute in f32 (loads widen, stores and explicit truncations round),
bool is `tl.int1`, index is `tl.int64`. Unsigned integers (and unsigned predicates on signless ones) are
the same bits seen through `tl.uintN`.
"""

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)


class Unsupported(NotImplementedError):
    """The Triton target cannot emit this; the kernel then runs on the reference evaluator."""


def compute_type(t) -> str:
    """The `tl` dtype a body value of xDSL type `t` is computed in."""
    if isinstance(t, Float16Type | BFloat16Type | Float32Type):
        return "tl.float32"
    if isinstance(t, Float64Type):
        return "tl.float64"
    if isinstance(t, IndexType):
        return "tl.int64"
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return "tl.int1"
        if w not in (8, 16, 32, 64):
            raise Unsupported(f"no Triton type for {t}")
        return f"tl.uint{w}" if t.signedness.data == Signedness.UNSIGNED else f"tl.int{w}"
    raise Unsupported(f"no Triton type for {t}")


def storage_type(t) -> str:
    """The `tl` dtype of one element in memory (what a store rounds to)."""
    if isinstance(t, Float16Type):
        return "tl.float16"
    if isinstance(t, BFloat16Type):
        return "tl.bfloat16"
    return compute_type(t)


def rounded(x: str, s: str, c: str) -> str:
    """Triton source of `x` (in compute type c) rounded to the storage type s and held in c again; bfloat16 through
    the prelude's _round_bf16, which rounds to nearest under the interpreter too (a plain cast there truncates)."""
    if s == c:
        return x
    return f"_round_bf16({x})" if s == "tl.bfloat16" and c == "tl.float32" else f"{x}.to({s}).to({c})"


def stored(x: str, s: str, c: str) -> str:
    """Triton source of `x` (compute type c) as the storage type s, for a store: rounded first, then an exact cast."""
    if s == c:
        return x
    return f"_round_bf16({x}).to({s})" if s == "tl.bfloat16" and c == "tl.float32" else f"{x}.to({s})"


# storage dtype -> its name in a Triton signature (triton.compile's ASTSource, ahead-of-time compiles: aot.py)
_SIGNATURE = {
    "tl.float16": "fp16",
    "tl.bfloat16": "bf16",
    "tl.float32": "fp32",
    "tl.float64": "fp64",
    "tl.int1": "i1",
    **{f"tl.{s}int{w}": f"{s[:1] or 'i'}{w}" for s in ("", "u") for w in (8, 16, 32, 64)},
}


def pointer_type(t) -> str:
    """The Triton signature type of a pointer to elements of xDSL type `t` ("*fp32", "*i1", ...)."""
    return "*" + _SIGNATURE[storage_type(t)]


def unsigned_type(t) -> str:
    """The unsigned `tl` dtype with the bits of integer type `t` (bool stays bool)."""
    c = compute_type(t)
    return c if c == "tl.int1" else c.replace("tl.int", "tl.uint")


def is_float(t) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_bool(t) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def literal(value, t, shape: str = "[1]") -> str:
    """A scalar constant of type `t` as a one-element tensor of its compute type and the kernel's rank (its dtype
    is never a guess; 0-d tensors trip the interpreter in boolean ops, and tl.broadcast_to needs equal ranks)."""
    if is_float(t):
        v = float(value)
        text = repr(v) if v == v and abs(v) != float("inf") else f'float("{v}")'
    else:
        text = str(int(bool(value)) if is_bool(t) else int(value))
    return f"tl.full({shape}, {text}, {compute_type(t)})"
