"""fold-bias: a product's bias add that stands alone joins the library call that computes the product.

A linear layer arrives as `tn.mm` and a nest that adds its bias. Fusion joins that nest to the kernels that read it,
but where only library calls read it (BERT's q, k and v, which go to attention; a returned projection) it is a
kernel of its own: one more pass over the product (HF BERT h256 L4 has 12, each 2048x256: 0.5-0.8 ms of a call's
kernels). oneDNN's linear adds a bias inside its own pass at no measurable cost, so there the pair becomes

    %c = tn.mm %a, %b : MxK, KxN
    %r = loop.nest (M, N) { %x = loop.load %c[(i, j) -> (i, j)]     ->    %r = tn.addmm %a, %b bias %bias
                            %y = loop.load %bias[(i, j) -> (j)]
                            loop.yield (%x + %y) }

The target says which products (`picks(op)`: the cpu target's oneDNN ones, whose results it allocates, so no
buffer is planned for either form); a nest that does anything more (gelu, relu, a residual) stays a kernel, and so
does a product another op reads as well. Runs after fuse-loops, which has already joined the bias to any kernel
that reads the product. Without a target (irc-opt) it changes nothing unless asked: `-p 'fold-bias{every=true}'`.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass

from irc.dialects import loop
from irc.dialects import tensor as tn

_ROWS = AffineMap(2, 0, (AffineExpr.dimension(0), AffineExpr.dimension(1)))
_COLUMN = AffineMap(2, 0, (AffineExpr.dimension(1),))


def bias_of(nest: loop.NestOp, product: SSAValue) -> SSAValue | None:
    """The bias of `nest` when it is exactly r[i, j] = product[i, j] + bias[j] over the product's shape (either
    order of the sum), else None."""
    if nest.outs or nest.symbols or len(nest.res) != 1 or nest.iterator_kinds() != ["parallel", "parallel"]:
        return None
    if nest.space_shape(False) != list(product.type.get_shape()) or nest.res[0].type != product.type:
        return None
    ops = list(nest.body.block.ops)
    if len(ops) != 4 or not isinstance(add := ops[2], arith.AddfOp) or nest.yield_op.values[0] != add.result:
        return None
    loads = {op.result: op for op in ops[:2] if isinstance(op, loop.LoadOp) and not op.indices}
    if set(loads) != {add.lhs, add.rhs}:
        return None
    by_map = {loads[v].map.data: loads[v].source for v in (add.lhs, add.rhs)}
    if by_map.get(_ROWS) is not product or _COLUMN not in by_map:
        return None
    bias = by_map[_COLUMN]
    return bias if bias.type.get_element_type() == product.type.get_element_type() else None


def fold(mm: tn.MmOp, nest: loop.NestOp, bias: SSAValue) -> None:
    """Replace `nest` (mm's only reader) and `mm` by one tn.addmm where the nest stood."""
    new = tn.AddmmOp(mm.lhs, mm.rhs, bias, nest.res[0].type)
    nest.parent_block().insert_op_before(new, nest)
    nest.res[0].replace_all_uses_with(new.result)
    nest.parent_block().erase_op(nest)
    mm.parent_block().erase_op(mm)


@dataclass(frozen=True)
class FoldBiasPass(ModulePass):
    """Products the target's rule picks take their standalone bias add into the library call (every=true: each
    one)."""

    name = "fold-bias"
    every: bool = False  # irc-opt's way to see the rewrite without a target: the target's rule is not an option
    picks: Callable[[Operation], bool] | None = field(default=None, compare=False, repr=False)

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        picks = (lambda op: True) if self.every else self.picks
        if picks is None:
            return
        for mm in [op for op in module.walk() if isinstance(op, tn.MmOp)]:
            uses = list(mm.result.uses)
            if len(uses) != 1 or not isinstance(load := uses[0].operation, loop.LoadOp):
                continue
            nest = load.parent_op()
            if isinstance(nest, loop.NestOp) and (bias := bias_of(nest, mm.result)) is not None and picks(mm):
                fold(mm, nest, bias)


__all__ = ["FoldBiasPass", "bias_of", "fold"]
