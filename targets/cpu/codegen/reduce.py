"""loop.reduce on the CPU: identities, the lane-wise combine, and the horizontal combine of a vector
accumulator. Keyed by reduction kind like ops.EMIT is keyed by op class; argmax/argmin carry a
(value, position) pair and keep the first position on ties, a NaN counting as the extreme."""

from __future__ import annotations

from llvmlite import ir

from .types import compute_type, is_float, is_unsigned, splat
from .vec import I1, I32, I64, intrinsic, mangle


def cascades(kind: str, t) -> bool:
    """Whether a reduction's order changes its result: a float sum or product (max, min and integers are exact).
    Such a reduction runs every loop in blocks of at most tuning.CASCADE steps, each into a partial sum of its own
    added to the enclosing one after the block (Accumulator.block, emit.py rloops), so its rounding grows with the
    blocks' length and count, not with the elements'."""
    return kind in ("sum", "prod") and is_float(t)


def identity(kind: str, t):
    """The start value of an accumulator (a Python number for compute type of `t`)."""
    if kind in ("sum", "any"):
        return 0.0 if is_float(t) else 0
    if kind in ("prod", "all"):
        return 1.0 if is_float(t) else 1
    big = kind in ("min", "argmin")
    if is_float(t):
        return float("inf") if big else float("-inf")
    w = compute_type(t).width
    if w == 1:
        return 1 if big else 0
    if is_unsigned(t):
        return (1 << w) - 1 if big else 0
    return (1 << (w - 1)) - 1 if big else -(1 << (w - 1))


def const(ty, value, t):
    s = ty.element if isinstance(ty, ir.VectorType) else ty
    k = ir.Constant(s, float(value) if is_float(t) else int(value))
    return ir.Constant(ty, [k] * ty.count) if isinstance(ty, ir.VectorType) else k


def _call(b, name, x, y):
    fn = intrinsic(b.module, f"{name}.{mangle(x.type)}", x.type, [x.type, y.type])
    return b.call(fn, [x, y])


def combine(b: ir.IRBuilder, kind: str, t, acc, x):
    """acc (+) x lane-wise for sum/prod/max/min/any/all."""
    flt, bool_ = is_float(t), (not is_float(t) and compute_type(t).width == 1)
    if kind == "sum":
        return b.fadd(acc, x) if flt else (b.or_(acc, x) if bool_ else b.add(acc, x))
    if kind == "prod":
        return b.fmul(acc, x) if flt else (b.and_(acc, x) if bool_ else b.mul(acc, x))
    if kind in ("any", "all") or bool_:
        return b.or_(acc, x) if kind in ("any", "max") else b.and_(acc, x)
    if flt and not isinstance(acc.type, ir.VectorType):
        # A scalar accumulator: llvm.maximum/minimum (a NaN on either side stays, -0 below +0) reads acc once a
        # step. The selects below read it twice, and a fully unrolled chain of them took LLVM 22's loop vectoriser
        # 2^steps paths (minutes at 32 steps: adaptive_max_pool2d over 16x2, amax of an expanded input).
        return _call(b, "llvm.maximum" if kind == "max" else "llvm.minimum", acc, x)
    if flt:
        # Vectors keep the selects, 4 AVX-512 ops a step where llvm.maximum takes 6: x where it beats acc (x86's
        # max/min: acc on a tie or a NaN), then x where x is NaN: a NaN on either side stays, as torch's. Row and
        # column maxima (softmax's, amax) run faster this way; a max pool after a relu slower (docs/cpu-target.md).
        beats = b.fcmp_ordered(">" if kind == "max" else "<", x, acc)
        return b.select(b.fcmp_unordered("uno", x, x), x, b.select(beats, x, acc))
    if is_unsigned(t):
        name = "llvm.umax" if kind == "max" else "llvm.umin"
    else:
        name = "llvm.smax" if kind == "max" else "llvm.smin"
    return _call(b, name, acc, x)


def better(b: ir.IRBuilder, kind: str, t, new, best, new_pos, best_pos, ties_to_lower: bool):
    """For argmax/argmin: whether (new, new_pos) replaces (best, best_pos). With ties_to_lower an equal
    value (or both NaN) at a lower position also wins (used when merging lanes, whose order is unknown)."""
    rel = ">" if kind == "argmax" else "<"
    if is_float(t):
        strictly = b.fcmp_ordered(rel, new, best)
        nan_new, nan_best = b.fcmp_unordered("uno", new, new), b.fcmp_unordered("uno", best, best)
        take = b.or_(strictly, b.and_(nan_new, b.not_(nan_best)))
        same = b.or_(b.fcmp_ordered("==", new, best), b.and_(nan_new, nan_best))
    else:
        cmp = b.icmp_unsigned if is_unsigned(t) else b.icmp_signed
        take, same = cmp(rel, new, best), b.icmp_signed("==", new, best)
    if ties_to_lower:
        take = b.or_(take, b.and_(same, b.icmp_signed("<", new_pos, best_pos)))
    return take


def _halves(b, x):
    n = x.type.count // 2
    lo = b.shuffle_vector(x, x, ir.Constant(ir.VectorType(I32, n), list(range(n))))
    hi = b.shuffle_vector(x, x, ir.Constant(ir.VectorType(I32, n), list(range(n, 2 * n))))
    return lo, hi


def _to_scalar(b, x):
    return b.extract_element(x, ir.Constant(I32, 0))


def horizontal(b: ir.IRBuilder, kind: str, t, acc, pos=None):
    """A vector accumulator combined across its lanes (a tree of halves); (value, position) for arg kinds."""
    while acc.type.count > 1:
        lo, hi = _halves(b, acc)
        if pos is None:
            acc = combine(b, kind, t, lo, hi)
            continue
        plo, phi = _halves(b, pos)
        take = better(b, kind, t, hi, lo, phi, plo, True)
        acc, pos = b.select(take, hi, lo), b.select(take, phi, plo)
    return (_to_scalar(b, acc), None if pos is None else _to_scalar(b, pos))


class Accumulator:
    """A reduction's running value, in slots of the kernel's entry block: the value (and the position, for argmax and
    argmin), and a stack of partial sums of the blocks it runs in (emit.py rloops)."""

    def __init__(self, entry: ir.IRBuilder, b: ir.IRBuilder, kind: str, t, width: int | None):
        self.entry, self.kind, self.t = entry, kind, t
        self.ty = ir.VectorType(compute_type(t), width) if width else compute_type(t)
        self.slots = [self._fresh(b)]
        self.pos = None
        if kind in ("argmax", "argmin"):
            pty = ir.VectorType(I64, width) if width else I64
            self.pos = entry.alloca(pty)
            b.store(ir.Constant(pty, [ir.Constant(I64, 0)] * width) if width else ir.Constant(I64, 0), self.pos)

    def _fresh(self, b):
        slot = self.entry.alloca(self.ty)
        b.store(const(self.ty, identity(self.kind, self.t), self.t), slot)
        return slot

    @staticmethod
    def lanes(b: ir.IRBuilder, slot, w: int | None):
        """`slot` (a vector's alloca, or None) seen as its first `w` lanes, where w is narrower."""
        ty = slot.type.pointee if slot is not None else None
        if not (w and isinstance(ty, ir.VectorType) and w < ty.count):
            return slot
        return b.bitcast(slot, ir.VectorType(ty.element, w).as_pointer())

    @property
    def slot(self):
        """Where the current block adds."""
        return self.slots[-1]

    def block(self, b: ir.IRBuilder, run) -> None:
        """run(b) adding into a partial sum of its own, then that partial sum into the enclosing one."""
        self.slots.append(self._fresh(b))
        run(b)
        partial = self.slots.pop()
        b.store(combine(b, self.kind, self.t, b.load(self.slot), b.load(partial)), self.slot)


def bool_type(ty):
    return ir.VectorType(I1, ty.count) if isinstance(ty, ir.VectorType) else I1


__all__ = ["Accumulator", "cascades", "identity", "const", "combine", "better", "horizontal", "splat"]
