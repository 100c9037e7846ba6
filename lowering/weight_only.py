"""Weight-only int8 linear layers (torchao's Int8WeightOnlyConfig, per-row scales): after AOT autograd each is

    mul(mm(x, convert(permute(w, [1, 0]))), scale)      w: (N, K) int8, scale: (N,) (a reshape of its (N, 1))

which, compiled as it stands, copies the whole weight transposed into a float buffer on every call. fuse-quant
(lowering/quant_fuse.py) makes it one tn.weight_int8_mm, whose weight stays int8 between calls. A product of up to
GENERATED_ROWS static rows then lowers to one generated nest that reads the int8 weight row by row, widening each
element in registers (the scale, bias and activation fused after its sum): no float copy, and a quarter of the
float weight's memory traffic, which is what a product of few rows waits on. More rows (or a dynamic count) stay an
extern: the library's float product of the weight widened for that call (targets/cpu/libs/quant.py), where
the library's speed outweighs one pass over the weight. Per-group scales (a dequantized weight, then the product)
and any other shape of the chain are left as they are: a float graph, correct as eager's.
"""

from xdsl.dialects.builtin import TensorType, i8
from xdsl.ir import SSAValue

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.rules import rule
from irc.ir.types import DYN

from .loop_builder import NestBuilder, Unsupported, compute_type
from .tensor_to_loop import lowers

# rows up to which the generated product beats widening the weight for the library's (docs/benchmarks.md, Int8)
GENERATED_ROWS = 4


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


@lowers(tn.WeightInt8MmOp)
def lower_weight_int8_mm(op: tn.WeightInt8MmOp):
    """y[m, n] = sum_k x[m, k] * float(w[n, k]), times scale[n]: space (M, N, K), the reduction innermost along the
    weight's rows, so each row is read once per activation row as contiguous int8 vectors."""
    rows = _shape(op.input)[0]
    if rows == DYN or rows > GENERATED_ROWS:
        raise Unsupported(f"{rows if rows != DYN else 'a dynamic number of'} rows: the library's product")
    b = NestBuilder()
    b.set_space(
        [b.size(op.input, 0), b.size(op.weight, 0), b.size(op.input, 1)], [loop.PARALLEL, loop.PARALLEL, loop.REDUCTION]
    )
    dm, dn, dk = b.dims()
    t = compute_type(op.input.type.get_element_type())
    x, w = b.cast(b.load(op.input, [dm, dk]), t), b.cast(b.load(op.weight, [dn, dk]), t)
    y = b.mul(b.reduce("sum", b.mul(x, w)), b.cast(b.load(op.scale, [dn]), t))
    return b.finish([y], [op.result.type])


RULES = (fuse_weight_int8_mm,)

__all__ = ["GENERATED_ROWS", "RULES", "fuse_weight_int8_mm", "lower_weight_int8_mm"]
