"""Weight-only int8 linear layers (torchao's Int8WeightOnlyConfig, per-row scales): after AOT autograd each is

    mul(mm(x, convert(permute(w, [1, 0]))), scale)      w: (N, K) int8, scale: (N,) (a reshape of its (N, 1))

which, compiled as it stands, widens the whole weight into a float buffer on every call. fuse-quant
(lowering/quant_fuse.py) makes it one tn.weight_int8_mm, whose weight stays int8 in memory: the target reads it as
int8 (the cpu target: torch's _weight_int8pack_mm). Per-group scales (a dequantized weight, then the product) and any
other shape of the chain are left as they are: a float graph, correct as eager's.
"""

from xdsl.dialects.builtin import TensorType, i8
from xdsl.ir import SSAValue

from irc.dialects import tensor as tn
from irc.ir.rules import rule


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def _int8_weight(product: SSAValue) -> SSAValue | None:
    """The (N, K) int8 weight of mm(x, convert(permute(w, [1, 0]))) when `product` is that and only the mul reads it."""
    mm = product.owner
    if not isinstance(mm, tn.MmOp) or not product.has_one_use():
        return None
    widen = mm.rhs.owner
    if not isinstance(widen, tn.ConvertOp) or widen.result.type.get_element_type() != mm.lhs.type.get_element_type():
        return None
    perm = widen.input.owner
    if not isinstance(perm, tn.PermuteOp) or list(perm.perm.get_values()) != [1, 0]:
        return None
    return perm.input if perm.input.type.get_element_type() == i8 else None


@rule(tn.MulOp)
def fuse_weight_int8_mm(op: tn.MulOp):
    """mul(mm(x, convert(permute(w))), scale) -> tn.weight_int8_mm x, w, scale (the scale (N,) or (1, N))."""
    for product, scale in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if (w := _int8_weight(product)) is None:
            continue
        n, dtype = _shape(w)[0], op.result.type.get_element_type()
        if n < 0 or _shape(op.result) != _shape(product) or scale.type.get_element_type() != dtype:
            continue
        if _shape(scale) not in ((n,), (1, n)):
            continue
        pre = [] if _shape(scale) == (n,) else [tn.ReshapeOp(scale, TensorType(dtype, [n]))]
        x = product.owner.lhs
        return [*pre, tn.WeightInt8MmOp(x, w, pre[0].result if pre else scale, op.result.type)]
    return None


RULES = (fuse_weight_int8_mm,)

__all__ = ["RULES", "fuse_weight_int8_mm"]
