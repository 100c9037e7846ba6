"""Layout rules at the tensor level: permutes compose and cancel, and each op of a convolution region has an NHWC form.

Cancelling (the `fold-permutes` pass, rules applied to a fixpoint):

    permute(permute(x, p), q) -> permute(x, [p[i] for i in q])        fold_permute_permute
    permute(x, [0, 1, ..., n-1]) -> x                                  fold_permute_identity
    max_pool2d(permute(x, TO_NCHW)) (or avg_pool2d, or a sum, mean, amax or amin over dims without the
    channels)                                                          sink_permute_below
        -> permute(max_pool2d channels_last(x), TO_NCHW), for each result: the pool reads an NHWC region's
           output with channels innermost instead of a gather per output (a vector per window point),
           and the permute after it cancels against the next NHWC region's, or converts a 4x smaller tensor;
           a reduction reduces x over the same dims (_reduce_nhwc)
    the same ops of x, an argument the caller passes channels-last     read_channels_last_argument
        -> the same on permute(x, TO_NHWC), a view of x (irc.input_layout on @main says which are)
    mm(reshape(permute(x, TO_NCHW)), B), an NHWC region's flatten into a linear layer   flatten_nhwc_into_product
        -> mm(reshape(x), B's rows reordered to x's (h, w, c) order): a copy of B (folded when frozen) for one of x,
        made as B^T's columns reordered, which the product reads transposed as it read B (a linear layer's
        weight B^T, row-major: MKL's bf16 product of a 32x131072 flatten by 10 columns ran 1.8x slower on rows of 10);
        an addmm (autocast's narrow linear layer) the same, its bias as it was
    permute(sdpa(q, k, v), heads after rows) -> sdpa heads_last(q, k, v)     heads_last_attention
        (its only use): torch's flash kernel writes that layout, so the head merge's reshape is a view, not a
        strided copy of the attention output every call
    sdpa(q, k, v) with its logsumexp -> permute(sdpa heads_last(q, k, v)), both results    heads_last_training_attention
    sdpa_backward(...) -> permute(sdpa_backward heads_last(...)), each gradient      heads_last_attention_backward
        (rank >= 4): a training graph's flash kernels write those layouts whatever their operands', so a result is
        taken as the kernel gives it and only viewed (not copied into the planned layout every step), and the
        head merge or split after it folds to a plain reshape. (The forward's output follows its query's layout:
        output-layout computes a query's nest heads-last where it can, a fused q/k/v projection's nest among
        them; a query computed (batch, heads, rows, d) gives one copy into the result.)

NHWC forms (`to_nhwc(op)`, used by select-layout on the ops of a region it puts in NHWC): each op
becomes its NHWC computation between a permute into NHWC of each 4-d operand and a permute of the
result back to NCHW, so the rewrite means the same on its own; fold-permutes then cancels every
permute pair inside a region and leaves conversions only at its boundaries.

    conv(x, w, b)          -> permute(conv channels_last(permute(x, TO_NHWC), w, b), TO_NCHW)
    unary(x)               -> permute(unary(permute(x, TO_NHWC)), TO_NCHW)
    binary(x, y)           -> permute(binary(permute(x, TO_NHWC), permute(y, TO_NHWC)), TO_NCHW)   (0-d operands as they are)
    batch_norm_inference   -> permute((x' - mean) * rsqrt(var + eps) * w + b, TO_NCHW)   ([C] parameters broadcast
                              along the last dim of x' = permute(x, TO_NHWC); the same arithmetic as its loop form:
                              narrow operands converted to float32 first, the result rounded once; autocast's batch
                              norm of a bf16 / f16 x by float32 statistics is a region member so, not a boundary)
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.dialects.tensor.base import Binary, Unary, element, shape
from irc.ir.rules import Replace, apply_rules, rule
from irc.ir.types import DYN

from .loop_builder import compute_type
from .output_layout import INPUT_ATTR, orders_of

TO_NHWC = (0, 2, 3, 1)  # NCHW value -> NHWC value
TO_NCHW = (0, 3, 1, 2)  # NHWC value -> NCHW value


def perm_of(op: Operation | None) -> tuple[int, ...] | None:
    return tuple(op.perm.get_values()) if isinstance(op, tn.PermuteOp) else None


@rule(tn.PermuteOp)
def fold_permute_permute(op):  # permute(permute(x, p), q) -> permute(x, p o q), or x when that is the identity
    inner = op.input.owner
    if not isinstance(inner, tn.PermuteOp):
        return None
    p, q = perm_of(inner), perm_of(op)
    composed = [p[i] for i in q]
    return inner.input if composed == list(range(len(q))) else tn.PermuteOp(inner.input, composed)


@rule(tn.PermuteOp)
def fold_permute_identity(op):  # permute(x, identity) -> x
    return op.input if perm_of(op) == tuple(range(len(perm_of(op)))) else None


POOLS = (tn.MaxPool2dOp, tn.AvgPool2dOp)  # the pools with a channels-last form


def _pool_nhwc(op: tn.MaxPool2dOp | tn.AvgPool2dOp, x: SSAValue, before: list[Operation]) -> Replace:
    """op computed channels-last on x, the NHWC form of its input, each result permuted back to NCHW."""
    window = (op.kernel.get_values(), op.stride.get_values(), op.padding.get_values())
    ceil = op.ceil_mode is not None
    if isinstance(op, tn.MaxPool2dOp):
        pool = tn.MaxPool2dOp(x, *window, op.dilation.get_values(), ceil, nhwc_type(op.result), channels_last=True)
    else:
        divisor = op.divisor.value.data if op.divisor is not None else None
        pad = op.count_include_pad is not None
        pool = tn.AvgPool2dOp(x, *window, ceil, pad, divisor, nhwc_type(op.result), channels_last=True)
    back = [tn.PermuteOp(v, list(TO_NCHW)) for v in pool.results]
    return Replace([*before, pool, *back], [b.result for b in back])


REDUCTIONS = (tn.SumOp, tn.MeanOp, tn.AmaxOp, tn.AminOp)


def _reduce_nhwc(op, x: SSAValue, before: list[Operation]) -> list[Operation] | None:
    """op, a reduction of an NCHW view over dims that keep the channels, on x, its NHWC form, the result permuted
    back to NCHW; None where it cannot be. Each lane then sums down its channel, in blocks of partial sums on the
    CPU (targets/cpu/codegen/tuning.py CASCADE): a mean over 224x224 errs as eager's does."""
    dims = list(op.dims.get_values())
    if 1 in dims:
        return None
    reduced = type(op)(x, sorted(TO_NCHW[d] for d in dims))  # the view's dim d is dim TO_NCHW[d] of the NHWC value
    return [*before, reduced, tn.PermuteOp(reduced.result, list(TO_NCHW))]


def _nhwc_form(op, x: SSAValue, before: list[Operation]):
    """op, a pool or a reduction of an NCHW value, computed on x, its NHWC form (the ops `before` first)."""
    if getattr(op, "channels_last", None) is not None:
        return None  # already channels-last
    return _pool_nhwc(op, x, before) if isinstance(op, POOLS) else _reduce_nhwc(op, x, before)


@rule(POOLS + REDUCTIONS)
def sink_permute_below(op):
    """pool(permute(x, TO_NCHW)) or reduce(permute(x, TO_NCHW)) -> permute(the NHWC form on x, TO_NCHW): it reads the
    NHWC value with its channels innermost, a vector per window point where the NCHW form gathers across the
    channels (far off the memory bound), and converts a smaller result."""
    x = op.input.owner
    return _nhwc_form(op, x.input, []) if perm_of(x) == TO_NCHW else None


def laid_channels_last(v: SSAValue) -> bool:
    """Is v an argument of a function whose caller passes it channels-last (irc.input_layout, which the backend
    records from the example inputs' strides)?"""
    if not isinstance(v, BlockArgument) or not is_image(v) or not isinstance(f := v.block.parent_op(), func.FuncOp):
        return False
    orders = orders_of(f, INPUT_ATTR)
    return v.index < len(orders) and orders[v.index] == TO_NHWC


@rule(POOLS + REDUCTIONS)
def read_channels_last_argument(op):
    """A pool or reduction of an argument the caller passes channels-last -> its NHWC form on permute(x, TO_NHWC), a
    view of x, instead of a strided gather per output, which ran several times slower than eager's pool or mean."""
    if not laid_channels_last(op.input):
        return None
    into = tn.PermuteOp(op.input, list(TO_NHWC))
    return _nhwc_form(op, into.result, [into])


PRODUCTS = (tn.MmOp, tn.AddmmOp)  # a linear layer's product: its bias is per column, which the rows' order leaves alone


def flattened_into_product(v: SSAValue) -> Operation | None:
    """The product that reads v, an NCHW 4-d value, only through its flatten (reshape to [N, C*H*W]) as its left
    operand, with at most N columns (so that reordering its weight's rows costs no more than copying v); else None."""
    flat = _only_user(v)
    mm = _only_user(flat.result) if isinstance(flat, tn.ReshapeOp) and not flat.sizes else None
    if not isinstance(mm, PRODUCTS) or mm.lhs is not flat.result or DYN in shape(v) + shape(mm.rhs):
        return None
    (n, c, h, w), (rows, k) = shape(v), shape(mm.rhs)
    return mm if shape(flat.result) == (n, c * h * w) and rows == c * h * w and k <= n else None


def _only_user(v: SSAValue) -> Operation | None:
    return use.operation if (use := v.get_unique_use()) is not None else None


@rule(PRODUCTS)
def flatten_nhwc_into_product(op):
    """mm(reshape(permute(x, TO_NCHW), [N, C*H*W]), B) -> mm(reshape(x, [N, H*W*C]), B's rows in x's order) (an addmm
    too, its bias as it was): a classifier after an NHWC region (a flatten, then a linear layer) reads x as it lies,
    where its NCHW flatten was a transposed copy of the activation, every call. Row (c, h, w) of B becomes row
    (h, w, c): a copy of B, which freezing folds once (fold_constants) and which is never larger than the
    activation's (only where B has at most N columns)."""
    flat = op.lhs.owner
    nchw = flat.input.owner if isinstance(flat, tn.ReshapeOp) else None
    if perm_of(nchw) != TO_NCHW or flattened_into_product(nchw.result) is not op:
        return None
    x = nchw.input
    (n, h, w, c), (_, k) = shape(x), shape(op.rhs)
    t = TensorType(element(x), [n, h * w * c])
    ops = [tn.ReshapeOp(x, t), tn.PermuteOp(op.rhs, [1, 0])]  # B^T: a linear layer's own weight, (K, C*H*W)
    ops.append(tn.ReshapeOp(ops[-1].result, TensorType(element(op.rhs), [k, c, h, w])))
    ops.append(tn.PermuteOp(ops[-1].result, [0, 2, 3, 1]))
    ops.append(tn.ReshapeOp(ops[-1].result, TensorType(element(op.rhs), [k, h * w * c])))
    ops.append(tn.PermuteOp(ops[-1].result, [1, 0]))
    if isinstance(op, tn.AddmmOp):
        ops.append(tn.AddmmOp(ops[0].result, ops[-1].result, op.bias, op.result.type, op.epilogue_name))
    else:
        ops.append(tn.MmOp(ops[0].result, ops[-1].result, op.result.type))
    return Replace(ops, [ops[-1].result])


@rule(tn.PermuteOp)
def heads_last_attention(op):
    a = op.input.owner
    n = len(perm_of(op))
    if not isinstance(a, tn.ScaledDotProductAttentionOp) or a.heads_last is not None or a.logsumexp is not None:
        return None
    if perm_of(op) != (*range(n - 3), n - 2, n - 3, n - 1) or not a.result.has_one_use():
        return None
    scale, causal = a.scale.value.data, a.causal is not None
    new = tn.ScaledDotProductAttentionOp(a.query, a.key, a.value, a.mask, scale, causal, heads_last=True)
    return Replace([new], [new.result])


def _swap_last(v: SSAValue, dims: int) -> tn.PermuteOp:
    """v with its `dims`-th and (dims-1)-th dims from the end swapped (self-inverse)."""
    n = len(shape(v))
    return tn.PermuteOp(v, [*range(n - dims), n - dims + 1, n - dims, *range(n - dims + 2, n)])


@rule(tn.ScaledDotProductAttentionOp)
def heads_last_training_attention(op):
    if op.logsumexp is None or op.heads_last is not None or len(shape(op.query)) < 4:
        return None
    scale, causal = op.scale.value.data, op.causal is not None
    new = tn.ScaledDotProductAttentionOp(
        op.query, op.key, op.value, op.mask, scale, causal, logsumexp=True, heads_last=True
    )
    back = [_swap_last(new.result, 3), _swap_last(new.logsumexp, 2)]
    return Replace([new, *back], [b.result for b in back])


@rule(tn.ScaledDotProductAttentionBackwardOp)
def heads_last_attention_backward(op):
    if op.heads_last is not None or len(shape(op.query)) < 4:
        return None
    operands = (op.grad, op.query, op.key, op.value, op.out, op.logsumexp, op.mask)
    scale, causal = op.scale.value.data, op.causal is not None
    new = tn.ScaledDotProductAttentionBackwardOp(*operands, scale, causal, heads_last=True)
    back = [_swap_last(g, 3) for g in new.results]
    return Replace([new, *back], [b.result for b in back])


RULES = (
    fold_permute_permute,
    fold_permute_identity,
    sink_permute_below,
    read_channels_last_argument,
    flatten_nhwc_into_product,
    heads_last_attention,
    heads_last_training_attention,
    heads_last_attention_backward,
)


def nhwc_type(v: SSAValue) -> TensorType:
    """The type of an NCHW value's NHWC form."""
    n, c, h, w = shape(v)
    return TensorType(element(v), [n, h, w, c])


def arrives_nhwc(v: SSAValue) -> bool:
    """Is v an NHWC value seen as NCHW: a permute to NCHW, or a pool of one (which fold-permutes pools
    channels-last, the permute moved below it)?"""
    op = v.owner
    if isinstance(op, POOLS) and op.channels_last is None:
        op = op.input.owner
    return perm_of(op) == TO_NCHW


def converted_nhwc(v: SSAValue) -> list[SSAValue]:
    """What converting an NHWC region's output v back to NCHW converts: the results of the pools that read it,
    when only they do (fold-permutes pools v channels-last and converts their results, 4x smaller); the weight of
    the linear layer that reads its flatten (flatten_nhwc_into_product reorders the weight's rows instead: folded
    once where it is frozen), else v."""
    if mm := flattened_into_product(v):
        return [mm.rhs]
    pools = [u.operation for u in v.uses]
    if pools and all(isinstance(p, POOLS) and p.channels_last is None for p in pools):
        return [p.result for p in pools]
    return [v]


@dataclass(frozen=True)
class FoldPermutesPass(ModulePass):
    """Compose permutes of permutes; drop identity permutes (layout conversions that cancel); pool NHWC values as such."""

    name = "fold-permutes"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, RULES)


# ---- NHWC forms ----------------------------------------------------------------------------------


def is_image(v: SSAValue) -> bool:
    """A 4-d tensor: a value that has a layout (NCHW or NHWC)."""
    return isinstance(v.type, TensorType) and len(shape(v)) == 4


def layout_operands(op: Operation) -> list[SSAValue] | None:
    """The operands of `op` whose layout follows the op's, when the op has an NHWC form; else None."""
    if isinstance(op, tn.ConvolutionOp):
        ok = op.transposed is None and op.channels_last is None and is_image(op.input) and element(op.input) in _FLOATS
        return [op.input] if ok else None
    if isinstance(op, tn.BatchNormInferenceOp):  # also a narrow x with float32 statistics (autocast's batch norm)
        floats = all(element(v) in _FLOATS for v in op.operands)
        return [op.input] if is_image(op.input) and floats else None
    if isinstance(op, Unary | tn.ConvertOp):  # a dtype conversion too: quantize / dequantize chains between convs
        return [op.input] if is_image(op.input) else None
    if isinstance(op, Binary) and is_image(op.result):
        if all(is_image(v) or not shape(v) for v in op.operands):
            return [v for v in op.operands if is_image(v)]
    return None


def _floats():
    from xdsl.dialects.builtin import bf16, f16, f32, f64

    return (f16, bf16, f32, f64)


_FLOATS = _floats()


def to_nhwc(op: Operation) -> list[Operation]:
    """Ops computing `op` in NHWC between permutes; the last op's result replaces op's result."""
    ops: list[Operation] = []

    def add(o: Operation) -> SSAValue:
        ops.append(o)
        return o.results[0]

    def nhwc(v: SSAValue) -> SSAValue:
        return add(tn.PermuteOp(v, list(TO_NHWC))) if is_image(v) else v

    if isinstance(op, tn.ConvolutionOp):
        x = nhwc(op.input)
        conv = tn.ConvolutionOp(
            x,
            op.weight,
            op.bias,
            nhwc_type(op.result),
            stride=op.stride.get_values(),
            padding=op.padding.get_values(),
            dilation=op.dilation.get_values(),
            transposed=False,
            output_padding=op.output_padding.get_values(),
            groups=op.groups.value.data,
            channels_last=True,
        )
        y = add(conv)
    elif isinstance(op, tn.BatchNormInferenceOp):
        y = _batch_norm_nhwc(add, nhwc(op.input), op)
    elif isinstance(op, Unary):
        y = add(type(op)(nhwc(op.input)))
    elif isinstance(op, tn.ConvertOp):
        y = add(tn.ConvertOp(nhwc(op.input), element(op.result)))
    elif isinstance(op, Binary):
        y = add(type(op)(nhwc(op.lhs), nhwc(op.rhs)))
    else:
        raise AssertionError(f"no NHWC form for {op.name}")
    add(tn.PermuteOp(y, list(TO_NCHW)))
    return ops


def _batch_norm_nhwc(add, x: SSAValue, op: tn.BatchNormInferenceOp) -> SSAValue:
    """The loop form's arithmetic (lower_nn.lower_batch_norm_inference): every operand in its widest compute type
    (float32 for bf16 and f16, which autocast's batch norm of a narrow x by float32 statistics mixes), rounded once
    to the result's type."""
    el = max((compute_type(element(v)) for v in op.operands), key=lambda t: t.bitwidth)

    widened: dict[SSAValue, SSAValue] = {}

    def wide(v: SSAValue | None) -> SSAValue | None:
        if v is None or element(v) == el:
            return v
        if v not in widened:
            widened[v] = add(tn.ConvertOp(v, el))
        return widened[v]

    mean, var, weight, bias = (wide(v) for v in (op.running_mean, op.running_var, op.weight, op.bias))
    eps = add(tn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(el, []), [op.eps.value.data])))
    rstd = add(tn.RsqrtOp(add(tn.AddOp(var, eps))))
    y = add(tn.MulOp(add(tn.SubOp(wide(x), mean)), rstd))
    if weight is not None:
        y = add(tn.MulOp(y, weight))
    if bias is not None:
        y = add(tn.AddOp(y, bias))
    return y if element(op.result) == el else add(tn.ConvertOp(y, element(op.result)))


__all__ = [
    "FoldPermutesPass",
    "RULES",
    "arrives_nhwc",
    "converted_nhwc",
    "nhwc_type",
    "TO_NCHW",
    "TO_NHWC",
    "layout_operands",
    "to_nhwc",
    "is_image",
    "perm_of",
]
