"""fold-bias: a product's bias add that stands alone, and a gelu after it, join the library call that computes
the product.

A linear layer arrives as `tn.mm` and a nest that adds its bias. Fusion joins that nest to the kernels that read it,
but where only library calls read it (attention's q, k and v; a returned projection) it is a kernel of its own: one
more pass over the product. oneDNN's linear adds a bias inside its own pass at no measurable cost, so there the
pair becomes

    %c = tn.mm %a, %b : MxK, KxN
    %r = loop.nest (M, N) { %x = loop.load %c[(i, j) -> (i, j)]     ->    %r = tn.addmm %a, %b bias %bias
                            %y = loop.load %bias[(i, j) -> (j)]
                            loop.yield (%x + %y) }

The nest may also run over the product's rows split into batch dims ((B, L, N) reading %c[(b * L + l, j)]: the
result is then a tn.reshape of the tn.addmm), and may apply a gelu to the sum, exactly as tensor-to-loop writes
tn.gelu: the feed-forward layer's gelu(x @ W1^T + b1), which oneDNN applies to each tile while it is in cache
(`epilogue "gelu"`, or "gelu_tanh"), cheaper than a pass of its own over the result. The target's rule says which
products (rules.Rules.biased_products, asked of the tn.addmm the fold would make, epilogue included: the cpu
target's oneDNN ones, whose results it allocates, so no buffer is planned for either form); a nest that does
anything else (relu: oneDNN's maps NaN to 0; a residual) stays a kernel, and so does a product another op reads as
well. A bf16 linear layer is one tn.addmm from the importer: a gelu nest that only widens it (once for each reader,
as fusion leaves it), applies the gelu and rounds again joins it the same way (oneDNN's gelu on the float32 sum,
one rounding). Runs after fuse-loops, which has already joined the bias to any
kernel that reads the product. Without a target (IR that records no plan) it changes nothing unless asked:
`-p 'fold-bias{every=true}'`. docs/loop-and-mem.md has the measurements behind it.
"""

import functools
import math as pymath
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr, AffineMap

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN

from .loop_builder import NestBuilder
from .product_pass import ProductPass
from .tensor_to_loop import gelu_body


def _linear(e: AffineExpr) -> bool:
    """No mod or division anywhere in e: an affine function of the dims, fixed by its values at the origin and at
    each unit step."""
    if isinstance(e, AffineBinaryOpExpr):
        return e.kind in (AffineBinaryOpKind.Add, AffineBinaryOpKind.Mul) and _linear(e.lhs) and _linear(e.rhs)
    return True


def _reads_rows(m: AffineMap, space: list[int]) -> bool:
    """Does m read a (M, N) product at (the row-major flattening of dims d0..d{r-2}, d{r-1}) over `space`? A linear
    map is that one when it agrees with it at the origin and at each unit step."""
    r = len(space)
    if m.num_dims != r or m.num_symbols or len(m.results) != 2 or not all(_linear(e) for e in m.results):
        return False
    for p in [[0] * r] + [[int(i == k) for i in range(r)] for k in range(r)]:
        flat = 0
        for i in range(r - 1):
            flat = flat * space[i] + p[i]
        if tuple(m.eval(p, [])) != (flat, p[-1]):
            return False
    return True


_TREE = {
    arith.AddfOp: "add",
    arith.MulfOp: "mul",
    arith.SubfOp: "sub",
    arith.DivfOp: "div",
    math.ErfOp: "erf",
    math.TanhOp: "tanh",
}


def _expression(v: SSAValue, leaves: frozenset[SSAValue], seen: set) -> str | None:
    """v as a function of x written out ("mul(x,0.5)"; a sum's or product's operands sorted), each of `leaves` an x,
    collecting the ops it takes into `seen`; None where it uses anything else."""
    if v in leaves:
        return "x"
    op = v.owner
    if not isinstance(op, Operation):
        return None
    seen.add(op)
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
        return repr(op.value.value.data)
    if (name := _TREE.get(type(op))) is None:
        return None
    args = [_expression(a, leaves, seen) for a in op.operands]
    if None in args:
        return None
    return f"{name}({','.join(sorted(args) if name in ('add', 'mul') else args)})"


@functools.cache
def _epilogues() -> dict[str, str]:
    """tn.addmm's epilogues, each as tensor-to-loop writes it (_expression of its tn.gelu lowering) -> its name."""
    found = {}
    for name, approximate in (("gelu", "none"), ("gelu_tanh", "tanh")):
        b = NestBuilder()
        x = b.const(0.0, f32)
        found[_expression(gelu_body(b, x, approximate), frozenset([x]), set())] = name
    return found


def bias_of(nest: loop.NestOp, product: SSAValue) -> tuple[SSAValue, str | None] | None:
    """(bias, epilogue) when `nest` is exactly r[..., j] = epilogue(product[row, j] + bias[j]) over the product's
    rows (flattened in the nest's leading dims) and columns, either order of the sum, epilogue None or one of
    tn.addmm's; else None."""
    space, (m, n) = nest.space_shape(False), product.type.get_shape()
    rank = len(space)
    if nest.outs or nest.symbols or len(nest.res) != 1 or nest.iterator_kinds() != ["parallel"] * rank or rank < 2:
        return None
    if DYN in space or space[-1] != n or pymath.prod(space[:-1]) != m:
        return None
    if nest.res[0].type.get_element_type() != product.type.get_element_type():
        return None
    ops = list(nest.body.block.ops)
    loads = [op for op in ops[:2] if isinstance(op, loop.LoadOp) and not op.indices]
    if len(ops) < 4 or len(loads) != 2 or not isinstance(add := ops[2], arith.AddfOp) or len(nest.yield_op.values) != 1:
        return None
    if {add.lhs, add.rhs} != {op.result for op in loads}:
        return None
    column = AffineMap(rank, 0, (AffineExpr.dimension(rank - 1),))
    rows = [op for op in loads if op.source is product and _reads_rows(op.map.data, space)]
    bias = [op.source for op in loads if op.map.data == column and op.source is not product]
    if len(rows) != 1 or len(bias) != 1 or bias[0].type.get_element_type() != product.type.get_element_type():
        return None
    out = nest.yield_op.values[0]
    if out == add.result:
        return bias[0], None
    # the yield's cone is the epilogue's ops alone (ops beside it are dead: fusion leaves some for a later DCE)
    epilogue = _epilogues().get(_expression(out, frozenset([add.result]), set()))
    return (bias[0], epilogue) if epilogue is not None else None


def narrow_epilogue(nest: loop.NestOp, product: SSAValue) -> str | None:
    """tn.addmm's epilogue when `nest` is exactly r[..., j] = round(epilogue(widen(product[row, j]))) over the
    product's rows and columns: a bf16/f16 linear layer's gelu, where the importer made the layer one tn.addmm."""
    space, (m, n) = nest.space_shape(False), product.type.get_shape()
    rank, el = len(space), product.type.get_element_type()
    if nest.outs or nest.symbols or len(nest.res) != 1 or nest.iterator_kinds() != ["parallel"] * rank or rank < 2:
        return None
    if DYN in space or space[-1] != n or pymath.prod(space[:-1]) != m or nest.res[0].type.get_element_type() != el:
        return None
    loads = [op for op in nest.body.block.ops if isinstance(op, loop.LoadOp)]
    if (
        len(loads) != 1
        or loads[0].source is not product
        or loads[0].indices
        or not _reads_rows(loads[0].map.data, space)
    ):
        return None
    # fusion widens the load once for each of its readers (GPT-2's gelu_tanh reads it four times)
    wide, (out,) = [u.operation for u in loads[0].result.uses], nest.yield_op.values
    if not all(isinstance(op, arith.ExtFOp) for op in wide) or len({op.result.type for op in wide}) != 1:
        return None
    if not isinstance(out.owner, arith.TruncFOp):
        return None
    return _epilogues().get(_expression(out.owner.input, frozenset(op.result for op in wide), set()))


def fold(
    mm: tn.MmOp | tn.AddmmOp, nest: loop.NestOp, bias: SSAValue, epilogue: str | None = None, picks=lambda op: True
) -> None:
    """Replace `nest` (mm's only reader) and `mm` by one tn.addmm where the nest stood (and a tn.reshape of it to the
    nest's shape where that splits the rows), where `picks` that tn.addmm: the rule may send a product to its
    library by its epilogue."""
    new = tn.AddmmOp(mm.lhs, mm.rhs, bias, mm.result.type, epilogue)
    if not picks(new):
        new.erase()
        return
    ops = [new]
    if nest.res[0].type != new.result.type:
        ops.append(tn.ReshapeOp(new.result, nest.res[0].type))
    nest.parent_block().insert_ops_before(ops, nest)
    nest.res[0].replace_all_uses_with(ops[-1].results[0])
    nest.parent_block().erase_op(nest)
    mm.parent_block().erase_op(mm)


@dataclass(frozen=True)
class FoldBiasPass(ProductPass):
    """Products the target's rule picks take their standalone bias add into the library call (every=true: each
    one)."""

    name = "fold-bias"

    def rewrite(self, mm: tn.MmOp, picks) -> None:
        uses = list(mm.result.uses)
        if len(uses) != 1 or not isinstance(load := uses[0].operation, loop.LoadOp):
            return
        nest = load.parent_op()
        if isinstance(nest, loop.NestOp) and (found := bias_of(nest, mm.result)) is not None:
            fold(mm, nest, *found, picks=picks)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        super().apply(ctx, module)
        picks = (lambda op: True) if self.every else self.picks
        if picks is None:
            return
        for op in [op for op in module.walk() if isinstance(op, tn.AddmmOp) and op.epilogue is None]:
            uses = list(op.result.uses)
            if len(uses) != 1 or not isinstance(load := uses[0].operation, loop.LoadOp):
                continue
            nest = load.parent_op()
            if isinstance(nest, loop.NestOp) and (epilogue := narrow_epilogue(nest, op.result)):
                fold(op, nest, op.bias, epilogue, picks)


__all__ = ["FoldBiasPass", "bias_of", "fold"]
