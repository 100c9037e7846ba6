"""Integer arithmetic of the op table (ops.py) that never traps and is never undefined, as the reference
evaluator defines it (dialects/semantics/scalar.py SCALAR): division and remainder by zero or of INT_MIN by -1 give
an unspecified value instead of a trap, shifts by an amount outside the width give 0 (or the sign), and integer
powers follow torch for negative exponents. Entries have the table's form, `fn(cx, op, *operands) -> value`.
"""

from __future__ import annotations

from llvmlite import ir

from .types import splat
from .vec import I1, same_shape


def const_like(x, v):
    """The constant v in x's type (in every lane of a vector)."""
    return splat(x.type, v)


def bit_width(x) -> int:
    """The bits of an integer value (of each lane of a vector)."""
    return x.type.element.width if isinstance(x.type, ir.VectorType) else x.type.width


def _safe_divisor(cx, a, d):
    """(a', d') with d' != 0 and no INT_MIN / -1 overflow; the result for a zero divisor is unspecified."""
    b = cx.b
    zero = b.icmp_signed("==", d, const_like(d, 0))
    d = b.select(zero, const_like(d, 1), d)
    width = bit_width(d)
    if width > 1:
        by_minus_one = b.icmp_signed("==", d, const_like(d, -1))
        ovf = b.and_(by_minus_one, b.icmp_signed("==", a, const_like(a, -(1 << (width - 1)))))
        d = b.select(ovf, const_like(d, 1), d)
    return a, d


def sdiv(cx, op, a, d):
    a, d = _safe_divisor(cx, a, d)
    return cx.b.sdiv(a, d)


def srem(cx, op, a, d):
    a, d = _safe_divisor(cx, a, d)
    return cx.b.srem(a, d)


def udiv(cx, op, a, d):
    d = cx.b.select(cx.b.icmp_unsigned("==", d, const_like(d, 0)), const_like(d, 1), d)
    return cx.b.udiv(a, d)


def urem(cx, op, a, d):
    d = cx.b.select(cx.b.icmp_unsigned("==", d, const_like(d, 0)), const_like(d, 1), d)
    return cx.b.urem(a, d)


def floordiv(cx, op, a, d):
    b = cx.b
    a, d = _safe_divisor(cx, a, d)
    q, r = b.sdiv(a, d), b.srem(a, d)
    adjust = b.and_(b.icmp_signed("!=", r, const_like(r, 0)), b.icmp_signed("<", b.xor(r, d), const_like(r, 0)))
    return b.sub(q, b.zext(adjust, q.type))


def ceildiv(cx, op, a, d):
    b = cx.b
    return b.neg(floordiv(cx, op, b.neg(a), d))


def shift(kind):
    def emit(cx, op, a, s):
        b, w = cx.b, bit_width(a)
        bad = b.icmp_unsigned(">=", s, const_like(s, w))  # negative amounts are huge unsigned
        safe = b.select(bad, const_like(s, 0), s)
        if kind == "shl":
            return b.select(bad, const_like(a, 0), b.shl(a, safe))
        if kind == "lshr":
            return b.select(bad, const_like(a, 0), b.lshr(a, safe))
        return b.ashr(a, b.select(bad, const_like(s, w - 1), s))

    return emit


def ipow(cx, op, base, e):
    """Integer power by square-and-multiply over the exponent's bits; negative exponents as torch (0, or +-1).
    Vectors run every bit (lanes share no branch); a scalar loops while bits remain: the same chain unrolled over
    64 bits is more straight-line code than LLVM's optimiser gets through in reasonable time (a 0-d int64 `a ** b`
    the fuzzer found hung the compile)."""
    b, w = cx.b, bit_width(base)
    neg = b.icmp_signed("<", e, const_like(e, 0))
    if isinstance(base.type, ir.VectorType):
        acc, sq, k = const_like(base, 1), base, e
        for _ in range(w):
            bit = b.trunc(b.and_(k, const_like(k, 1)), same_shape(k.type, I1))
            acc = b.select(bit, b.mul(acc, sq), acc)
            sq, k = b.mul(sq, sq), b.lshr(k, const_like(k, 1))
    else:
        acc = _ipow_loop(b, base, e)
    one = b.icmp_signed("==", base, const_like(base, 1))
    minus = b.icmp_signed("==", base, const_like(base, -1))
    odd = b.trunc(b.and_(e, const_like(e, 1)), same_shape(e.type, I1))
    sign = b.select(odd, const_like(base, -1), const_like(base, 1))  # (-1) ** e
    negval = b.select(one, const_like(base, 1), b.select(minus, sign, const_like(base, 0)))
    return b.select(neg, negval, acc)


def _ipow_loop(b, base, e):
    """base ** e for a non-negative e (any e terminates: e is shifted as unsigned), as a loop over e's bits."""
    pre, fn = b.block, b.function
    head, body, done = (fn.append_basic_block(f"ipow.{n}") for n in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    acc, sq, k = b.phi(base.type), b.phi(base.type), b.phi(e.type)
    acc.add_incoming(const_like(base, 1), pre)
    sq.add_incoming(base, pre)
    k.add_incoming(e, pre)
    b.cbranch(b.icmp_unsigned("!=", k, const_like(k, 0)), body, done)
    b.position_at_end(body)
    bit = b.trunc(b.and_(k, const_like(k, 1)), I1)
    acc.add_incoming(b.select(bit, b.mul(acc, sq), acc), body)
    sq.add_incoming(b.mul(sq, sq), body)
    k.add_incoming(b.lshr(k, const_like(k, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    return acc
