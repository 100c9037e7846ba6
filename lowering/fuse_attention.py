"""fuse-attention: matmul -> scale -> mask -> softmax -> matmul becomes one tn.sdpa (torch's scaled_dot_product_attention).

The pattern, as AOT autograd leaves `softmax(q @ k.transpose(-2, -1) / c [+ mask | masked_fill(m, -inf)]) @ v`
for q, k, v of shape (b..., n, e): batched products over the flattened batch dims,

    s = reshape(bmm(reshape(q), reshape(permute(k, swap last two))))      scores (b..., L, S)
    s = div(s, c) | mul(s, c) | mul(c, s)                                  optional; c a scalar constant (a bf16 / f16
                                                                           s: convert(div(convert(s) to f32, c)))
    s = where(m, -inf, s) | where(m, s, -inf) | add(s, mask) | add(mask, s)   optional
    o = bmm(reshape(softmax(s, last dim)), reshape(v))                     (B, L, Ev), B = prod(b...)

becomes `reshape(sdpa(q, k, v, mask, scale))`; simplify-tensor then folds the reshapes on either side. The same
holds for torch's own scaled_dot_product_attention as AOT autograd decomposes it: q and k^T each multiplied by
sqrt(scale) before the product, and a safe softmax, where(all(s == -inf, last dim), 0, softmax(s)), which zeroes
fully masked rows as tn.sdpa does.
Refused (left as it is): dynamic shapes (the batch dims of q, k and v must be proved equal to those of
the scores), a softmax or scores tensor used elsewhere (training graphs save them for the backward),
a scale that is not a constant scalar. One difference: a row whose every key is masked gives 0 from
torch's SDPA where the unfused softmax gives NaN (inductor's substitution makes the same trade).
"""

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.dialects.tensor.creation import splat
from irc.ir.rules import apply_rules, rule
from irc.ir.types import is_float


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def _single_use(v: SSAValue, readers: frozenset = frozenset()) -> bool:
    """v has one reader, or is read only by `readers` (the softmax and the fully-masked-row test of a safe softmax)."""
    return v.has_one_use() or bool(readers) and all(u.operation in readers for u in v.uses)


class _Build:
    """New ops for the replacement, in order; values of a wanted shape, through an existing reshape when it has one."""

    def __init__(self):
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def as_shape(self, v: SSAValue, want: tuple[int, ...]) -> SSAValue:
        if _shape(v) == want:
            return v
        if isinstance(v.owner, tn.ReshapeOp) and _shape(v.owner.input) == want:
            return v.owner.input
        return self.add(tn.ReshapeOp(v, TensorType(v.type.get_element_type(), want)))


def _peel_mask(s: SSAValue, b: _Build, readers: frozenset) -> tuple[SSAValue, SSAValue | None]:
    """(scores, mask) under an optional masking layer; the mask keeps (i1) or is added (float)."""
    op, full = s.owner, _shape(s)
    if isinstance(op, tn.WhereOp) and _single_use(s, readers):
        for fill, scores, keep_when in ((op.lhs, op.rhs, False), (op.rhs, op.lhs, True)):
            if splat(fill) == -math.inf and _shape(scores) == full:
                if keep_when:
                    return scores, op.cond
                cond = op.cond.owner
                if isinstance(cond, tn.BitwiseNotOp | tn.LogicalNotOp) and cond.input.type.get_element_type() == i1:
                    return scores, cond.input
                return scores, b.add(tn.LogicalNotOp(op.cond))
    if isinstance(op, tn.AddOp) and _single_use(s, readers):
        for scores, mask in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if _shape(scores) == full and _scaled_product(scores, frozenset()) is not None:
                return scores, mask
    return s, None


def _narrowed(s: SSAValue, readers: frozenset) -> tuple[SSAValue, frozenset, Attribute | None]:
    """s = convert(y), a float value rounded from a wider one (the importer writes a narrow op as
    convert(op(convert(x) to f32, ...)), the last convert marked irc.op_rounding; a cast the program wrote means the
    same): (y, its readers, s's type), else (s, readers, None)."""
    op = s.owner
    if isinstance(op, tn.ConvertOp) and is_float(s.type.get_element_type()) and _single_use(s, readers):
        return op.input, frozenset(), s.type.get_element_type()
    return s, readers, None


def _scaled_product(s: SSAValue, readers: frozenset) -> tuple[tn.BmmOp, float] | None:
    """(bmm, scale) when s is reshape?(bmm) under an optional multiplication or division by a constant scalar (in a
    narrow type, widened around the division as the importer writes it: sdpa rounds its scores its own way, within
    the type's tolerance)."""
    scale = 1.0
    scaled, scaled_readers, narrow = _narrowed(s, readers)
    if isinstance(scaled.owner, tn.DivOp | tn.MulOp) and _single_use(scaled, scaled_readers):
        op = scaled.owner
        pairs = ((op.lhs, op.rhs),) if isinstance(op, tn.DivOp) else ((op.lhs, op.rhs), (op.rhs, op.lhs))
        for inner, c in pairs:
            value = splat(c)
            if narrow is not None:  # the scores widened: their narrow value
                widen = inner.owner
                if not (isinstance(widen, tn.ConvertOp) and inner.has_one_use()):
                    continue
                inner = widen.input
                if inner.type.get_element_type() != narrow:
                    continue
            if value is not None and value != 0 and _shape(inner) == _shape(s):
                scale = 1.0 / value if isinstance(op, tn.DivOp) else value
                s, readers = inner, frozenset()
                break
        else:
            return None
    elif narrow is not None:
        return None
    op = s.owner
    if isinstance(op, tn.ReshapeOp) and _single_use(s, readers):
        s = op.input
    if not isinstance(s.owner, tn.BmmOp) or not _single_use(s):
        return None
    return s.owner, scale


def _is_zero(v: SSAValue) -> bool:
    return splat(v) == 0.0 or isinstance(v.owner, tn.ExpandOp) and splat(v.owner.input) == 0.0


def _safe_softmax(p: SSAValue) -> tuple[SSAValue, frozenset] | None:
    """torch's decomposition of scaled_dot_product_attention: where(all(s == -inf, last dim), 0, softmax(s)) zeroes
    the rows whose every key is masked, as SDPA itself does. (the softmax result, the ops that read s) or None."""
    op = p.owner
    if not isinstance(op, tn.WhereOp) or not _is_zero(op.lhs) or not isinstance(op.rhs.owner, tn.SoftmaxOp):
        return None
    every, s = op.cond.owner, op.rhs.owner.input
    rank = len(_shape(s))
    if not isinstance(every, tn.AllOp) or list(every.dims.get_values()) != [rank - 1] or not op.cond.has_one_use():
        return None
    eq = every.input.owner
    if not isinstance(eq, tn.EqOp) or not every.input.has_one_use():
        return None
    if not any(x == s and splat(c) == -math.inf for x, c in ((eq.lhs, eq.rhs), (eq.rhs, eq.lhs))):
        return None
    return op.rhs, frozenset((op.rhs.owner, eq))


def _probabilities(p: SSAValue) -> tuple[tn.SoftmaxOp, frozenset] | None:
    """The softmax over the last dim that p is (through a reshape, or a safe softmax), used only here; and the ops
    that may read its input besides the softmax."""
    if isinstance(p.owner, tn.ReshapeOp) and _single_use(p):
        p = p.owner.input
    readers = frozenset((p.owner,))
    if (safe := _safe_softmax(p)) is not None and _single_use(p):
        p, readers = safe
    op = p.owner
    if isinstance(op, tn.SoftmaxOp) and _single_use(p) and op.dim.value.data == len(_shape(p)) - 1:
        return op, readers
    return None


def _unscale(v: SSAValue) -> tuple[SSAValue, float]:
    """(x, c) for v = x * c with c a constant scalar (torch's SDPA decomposition scales q and k^T by sqrt(scale) each)."""
    op = v.owner
    if isinstance(op, tn.MulOp) and v.has_one_use():
        for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if (value := splat(c)) is not None and _shape(x) == _shape(v):
                return x, value
    return v, 1.0


def attention(out: tn.BmmOp) -> list[Operation] | None:
    """The ops replacing `out` (the second product) when it ends an attention pattern, else None."""
    found = _probabilities(out.lhs)
    if found is None:
        return None
    sm, readers = found
    if not all(t.has_static_shape() for t in (sm.input.type, out.lhs.type, out.rhs.type)):
        return None
    x = _shape(sm.input)
    if len(x) < 3:
        return None
    batch, (L, S) = x[:-2], x[-2:]
    B, Ev = math.prod(batch), _shape(out.rhs)[-1]
    b = _Build()
    scores, mask = _peel_mask(sm.input, b, readers)
    product = _scaled_product(scores, readers if scores is sm.input else frozenset()) if _shape(scores) == x else None
    if product is None:
        return None
    qk, scale = product
    E = _shape(qk.lhs)[-1]
    if _shape(qk.result) != (B, L, S) or _shape(out.lhs) != (B, L, S) or _shape(out.rhs) != (B, S, Ev):
        return None
    if mask is not None and (
        not mask.type.has_static_shape() or mask.type.get_element_type() not in (i1, sm.input.type.get_element_type())
    ):
        return None
    r = len(x)
    swap = [*range(r - 2), r - 1, r - 2]
    q, q_scale = _unscale(b.as_shape(qk.lhs, (*batch, L, E)))
    kt, k_scale = _unscale(b.as_shape(qk.rhs, (*batch, E, S)))
    scale *= q_scale * k_scale
    if isinstance(kt.owner, tn.PermuteOp) and list(kt.owner.perm.get_values()) == swap:
        k = kt.owner.input
    else:
        k = b.add(tn.PermuteOp(kt, swap))
    v = b.as_shape(out.rhs, (*batch, S, Ev))
    b.add(tn.ScaledDotProductAttentionOp(q, k, v, mask, scale))
    b.as_shape(b.ops[-1].results[0], (B, L, Ev))
    return b.ops


@rule(tn.BmmOp)
def fuse_attention(op):  # bmm(softmax(bmm(q, k^T) * scale + mask), v) -> sdpa(q, k, v, mask, scale)
    return attention(op)


RULES = (fuse_attention,)


@dataclass(frozen=True)
class FuseAttentionPass(ModulePass):
    """Each matmul-softmax-matmul attention becomes one tn.sdpa."""

    name = "fuse-attention"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, RULES)


__all__ = ["FuseAttentionPass", "RULES", "attention"]
