"""Index and lane arithmetic for the kernel emitter: Python ints fold at compile time, LLVM scalars and
`<W x i64>` vectors broadcast against each other; `Lanes(base)` is the vector dim inside a vector body."""

from __future__ import annotations

import functools

from llvmlite import ir

from .vec import I32, I64


class Lanes:
    """The vector dim inside a vector body: lanes base, base + 1, ...; `mask` (<W x i1>) marks the lanes
    inside the space in a loop's last, partial vector (None: all of them)."""

    def __init__(self, base, mask=None):
        self.base, self.mask = base, mask


def splat(b, x, n):
    if isinstance(x.type, ir.VectorType):
        return x
    v = b.insert_element(ir.Constant(ir.VectorType(x.type, n), ir.Undefined), x, ir.Constant(I32, 0))
    return b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, n), [0] * n))


def count(x):
    return x.type.count if isinstance(getattr(x, "type", None), ir.VectorType) else None


@functools.cache
def abi_size(ty: ir.Type) -> int:
    """Bytes of a scalar type on the 64-bit targets irc generates code for (x86-64, aarch64): integers round up to
    a power of two bytes, pointers are 8 (asking LLVM's data layout would load LLVM into the process)."""
    if isinstance(ty, ir.IntType):
        return 1 << max(0, (ty.width - 1).bit_length() - 3)
    if isinstance(ty, ir.PointerType):
        return 8
    return {"half": 2, "bfloat": 2, "float": 4, "double": 8}[str(ty)]


def mangle_el(t):
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(t)]


def set_at(dims, d, x):
    out = list(dims)
    out[d] = x
    return out


def fill(dims, ds):
    return set_at(dims, ds[0], 0) if len(ds) == 1 else [0 if i in ds else x for i, x in enumerate(dims)]


def ival(x):
    return ir.Constant(I64, x) if isinstance(x, int) else x


def kconst(x, v):
    t = x.type
    return ir.Constant(t, [ir.Constant(t.element, v)] * t.count) if isinstance(t, ir.VectorType) else ir.Constant(t, v)


def same(b, x, y):
    x, y = ival(x), ival(y)
    n = count(x) or count(y)
    return (splat(b, x, n), splat(b, y, n)) if n else (x, y)


def add(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if isinstance(y, int) and y == 0:
        return x
    if isinstance(x, int) and x == 0:
        return y
    return b.add(*same(b, x, y))


def mul(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    for p, q in ((x, y), (y, x)):
        if isinstance(q, int) and q == 1:
            return p
        if isinstance(q, int) and q == 0:
            return 0
    return b.mul(*same(b, x, y))


def sdiv(b, x, k: int):
    return x // k if isinstance(x, int) else b.sdiv(x, ir.Constant(I64, k))


def cdiv(b, x, k: int):
    return -(-x // k) if isinstance(x, int) else b.sdiv(b.add(x, ir.Constant(I64, k - 1)), ir.Constant(I64, k))


def udiv(b, x, y):
    if isinstance(y, int) and y == 1:
        return x
    return x // y if isinstance(x, int) and isinstance(y, int) else b.udiv(ival(x), ival(y))


def urem(b, x, y):
    if isinstance(y, int) and y == 1:
        return 0
    return x % y if isinstance(x, int) and isinstance(y, int) else b.urem(ival(x), ival(y))


def imin(b, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return min(x, y)
    x, y = ival(x), ival(y)
    return b.select(b.icmp_signed("<", x, y), x, y)
