"""simplify-tensor: algebraic clean-ups of tn ops (value semantics, so each rule holds whatever the layout)."""

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, bf16, f16
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.dialects.tensor.creation import splat
from irc.ir.rules import Replace, apply_rules, rule
from irc.ir.types import DYN, is_float


@rule(tn.ReshapeOp)
def fold_reshape_reshape(op):  # reshape(reshape(x)) -> reshape(x): row-major order is kept by both
    inner = op.input.owner
    if not isinstance(inner, tn.ReshapeOp):
        return None
    return tn.ReshapeOp(inner.input, op.result.type, list(op.sizes))


@rule(tn.ReshapeOp)
def fold_reshape_identity(op):  # reshape(x : T) : T -> x, for a static T
    return op.input if op.input.type == op.result.type and op.result.type.has_static_shape() else None


@rule(tn.ReshapeOp)
def reshape_before_permute(op):
    """reshape(permute(x)) -> permute(reshape(x)) where the reshape only merges dims that lie next to each other, in
    order, in x (static shapes; size-1 dims go anywhere). The merge is then free on x's buffer and the permute stays
    a view: a batched matmul reads the heads of a transposed (B, H, S, S) as strides, where the reshape of the
    permuted view was a copy (nn.MultiheadAttention's backward writes this pattern)."""
    perm_op = op.input.owner
    if not isinstance(perm_op, tn.PermuteOp):
        return None
    x, perm = perm_op.input, list(perm_op.perm.get_values())
    src, out = x.type.get_shape(), op.result.type.get_shape()
    if not (x.type.has_static_shape() and op.result.type.has_static_shape()):
        return None
    dims = [d for d in perm if src[d] != 1]  # x's non-unit dims, in the permuted order
    groups, k = [], 0  # per non-unit output dim: the run of x dims it merges
    for n in (n for n in out if n != 1):
        run, size = [], 1
        while size < n and k < len(dims):
            run.append(dims[k])
            size *= src[dims[k]]
            k += 1
        if size != n:
            return None
        groups.append(run)
    order = sorted(d for d in range(len(src)) if src[d] != 1)
    if any(order.index(b) != order.index(a) + 1 for run in groups for a, b in zip(run, run[1:])):
        return None  # a merge of dims that are not neighbours in x: the reshape must move data
    ranked = sorted(range(len(groups)), key=lambda g: groups[g][0])  # the merged dims in x's order
    merged = [prod(src[d] for d in groups[g]) for g in ranked] + [1] * out.count(1)
    rank_of = {g: i for i, g in enumerate(ranked)}
    units, it = iter(range(len(ranked), len(merged))), iter(range(len(groups)))
    new_perm = [next(units) if n == 1 else rank_of[next(it)] for n in out]
    reshaped = tn.ReshapeOp(x, TensorType(op.result.type.element_type, merged))
    if new_perm == list(range(len(new_perm))):
        return reshaped
    return [reshaped, tn.PermuteOp(reshaped.result, new_perm)]


@rule(tn.BmmOp)
def bmm_by_one_matrix(op):
    """bmm(a, expand(w)) -> reshape(mm(reshape(a), w)) where w is one (K, N) matrix broadcast over the batch (a
    linear layer on a transposed 3-D input, as nn.MultiheadAttention's in-projection decomposes; static shapes):
    one product of B*M rows, where the batched one took the matrix B times, and in bf16 copied the broadcast
    matrix out B times first (the library's batched product wants every operand dense)."""
    expand = op.rhs.owner
    if not isinstance(expand, tn.ExpandOp) or not (
        op.lhs.type.has_static_shape() and op.result.type.has_static_shape()
    ):
        return None
    w = expand.input
    (b, m, k), n = op.lhs.type.get_shape(), op.result.type.get_shape()[-1]
    sizes = w.type.get_shape()
    if len(sizes) < 2 or sizes[-2:] != (k, n) or any(d != 1 for d in sizes[:-2]):
        return None  # only the batch broadcast: a matrix whose own dims expand stays batched
    element = op.result.type.element_type
    matrix = [] if sizes == (k, n) else [tn.ReshapeOp(w, TensorType(element, [k, n]))]
    rows = tn.ReshapeOp(op.lhs, TensorType(element, [b * m, k]))
    product = tn.MmOp(rows.result, matrix[0].result if matrix else w)
    return [*matrix, rows, product, tn.ReshapeOp(product.result, op.result.type)]


@rule(tn.PowOp)
def pow_of_small_exponent(op):
    """x ** c for the constant exponents ATen's CPU pow kernel writes out (PowKernel.cpp), as it writes them: 2 ->
    x*x, 3 -> x*x*x, -2 -> 1/(x*x), 0.5 -> sqrt, -0.5 -> rsqrt, -1 -> 1/x. Eager's numbers, and no exp and log per
    element, which cost several times the multiplies (a tanh-approximated gelu written out cubes its input). Half
    stays a pow, as in ATen (its special values differ: pow(-0, -0.5) is +inf where rsqrt(-0) is -inf)."""
    x, e = op.lhs, splat(op.rhs)
    element = x.type.get_element_type()
    if e is None or not is_float(element) or element == f16 or op.result.type != x.type:
        return None
    if e in (2.0, 3.0, -2.0):
        square = tn.MulOp(x, x)
        if e == 2.0:
            return square
        return [square, tn.MulOp(square.result, x) if e == 3.0 else tn.ReciprocalOp(square.result)]
    unary = {0.5: tn.SqrtOp, -0.5: tn.RsqrtOp, -1.0: tn.ReciprocalOp}.get(e)
    return unary(x) if unary else None


def _scaled(v, factor: float):
    """x where v = x * factor (either operand order, one reader), or v = round(widen(x) * factor) (a narrow x times a
    float32 scalar, as the importer writes eager's), else None."""
    narrow = v.type.get_element_type()
    rounded = isinstance(v.owner, tn.ConvertOp) and v.has_one_use()
    if rounded:
        v = v.owner.input
    op = v.owner
    if not isinstance(op, tn.MulOp) or not v.has_one_use():
        return None
    x = next((x for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)) if splat(c) == factor), None)
    if x is not None and rounded:  # x is widen(the narrow x) itself
        x = x.owner.input if isinstance(x.owner, tn.ConvertOp) else None
    return x if x is not None and x.type.get_element_type() == narrow else None


def _tanh_plus_one(v):
    """t where v = tanh(t) + 1 (either operand order, one reader each), else None."""
    op = v.owner
    if not isinstance(op, tn.AddOp) or not v.has_one_use():
        return None
    for th, one in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if isinstance(th.owner, tn.TanhOp) and th.has_one_use() and splat(one) == 1.0:
            return th.owner.input
    return None


@rule(tn.MulOp)
def tanh_gelu_as_sigmoid(op):
    """x/2 (1 + tanh(t)) -> x sigmoid(2t) in bf16 and f16 (GPT-2's gelu written out): the same function, where the
    sigmoid takes one exp and one division and tanh's form a polynomial branch, a copysign and the sum besides (a
    bf16-out kernel over 16x128x1024: 965 -> 808 us), and no cancellation for x < 0. Not in float32: there
    fold-bias knows the written-out form as tn.addmm's gelu_tanh epilogue, oneDNN's post-op."""
    el = op.result.type.get_element_type()
    if el not in (bf16, f16):
        return None
    for half, rest in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        x, t = _scaled(half, 0.5), _tanh_plus_one(rest)
        if x is not None and t is not None:
            break
    else:
        return None
    two = tn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(el, []), [2.0]))
    gate = [two, doubled := tn.MulOp(t, two.result), s := tn.SigmoidOp(doubled.result), y := tn.MulOp(x, s.result)]
    return gate if y.result.type == op.result.type else None


@rule(tn.MaxPool2dOp)
def max_pool_before_relu(op):
    """max_pool(relu(x)) -> relu(max_pool(x)) where the indices go unused (a relu maps a window's negatives to tied
    zeros, which moves the first maximum) and the pool is the relu's only reader: relu is non-decreasing, so the
    maximum of the relus is the relu of the maximum, NaNs included, and the relu runs on a quarter of the elements
    after a 3x3/2 pool, where a pool over relus ran well off its memory bound."""
    relu = op.input.owner
    if not isinstance(relu, tn.ReluOp) or op.indices.first_use is not None or not relu.result.has_one_use():
        return None
    pool = op.clone()
    pool.operands = [relu.input]
    after = tn.ReluOp(pool.result)
    return Replace([pool, after], [after.result, pool.indices])


SPLIT_MIN = 1 << 16  # elements of a whole-tensor reduction worth a second, small one so that threads share the first
SPLIT_ROW = 256  # elements the first reduction takes per row at least: whole vectors, a loop worth its overhead


def split_rows(sizes) -> int | None:
    """Where a whole-tensor reduction of these static sizes splits (the dims before it are the rows, each of at
    least SPLIT_ROW elements), or None when it stays one reduction: too few elements, fewer than two rows, a
    dynamic size. Also lower_quant.py's, for dynamic quantization's minimum and maximum."""
    if DYN in sizes or prod(sizes) < SPLIT_MIN:
        return None
    inner = len(sizes)
    while inner > 0 and prod(sizes[inner:]) < SPLIT_ROW:
        inner -= 1
    return inner if prod(sizes[:inner]) >= 2 else None


@rule((tn.AminOp, tn.AmaxOp, tn.AnyOp, tn.AllOp))
def split_whole_reduction(op):
    """A reduction of a whole large tensor -> the same reduction over its trailing dims, then over what is left:
    the targets run a reduction's kept dims on all threads and a reduction to one value on one; the first now
    reads the tensor on all of them, the second a few hundred values. Only where order cannot change the result
    (min, max, any, all; a float sum would round differently), over static sizes."""
    sizes = op.input.type.get_shape()
    dims = list(op.dims.get_values())
    if dims != list(range(len(sizes))) or (inner := split_rows(sizes)) is None:
        return None
    rows = type(op)(op.input, list(range(inner, len(sizes))))
    return [rows, type(op)(rows.result, list(range(len(sizes))))]


RULES = (
    split_whole_reduction,
    fold_reshape_reshape,
    fold_reshape_identity,
    reshape_before_permute,
    bmm_by_one_matrix,
    pow_of_small_exponent,
    tanh_gelu_as_sigmoid,
    max_pool_before_relu,
)


@dataclass(frozen=True)
class SimplifyTensorPass(ModulePass):
    """Fold reshapes of reshapes and reshapes that change nothing; move merging reshapes before permutes; a batched
    product by one broadcast matrix as one product; powers of small constant exponents as products and roots; a
    narrow tanh-form gelu written out as x sigmoid(2t); a max pool before the relu it reads; a large whole-tensor min, max,
    any or all in two steps that threads share."""

    name = "simplify-tensor"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, RULES)


__all__ = ["SimplifyTensorPass", "RULES", "split_rows"]
