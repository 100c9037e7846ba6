"""matmul-to-loops: tn.mm and tn.bmm become loop nests, irc's generated matmul instead of the library's.

    %r = tn.mm %a, %b : tensor<MxKxf32>, tensor<KxNxf32> -> tensor<MxNxf32>
 -> %r = loop.nest space = (M, K, N) iterators = [parallel, reduction, parallel]:  r[m, n] = sum_k a[m, k] * b[k, n]

bmm adds the batch as the outermost dim. N is innermost on purpose: the CPU emitter then runs each row
in vectors of N with the K loop inside (a[m, k] a broadcast scalar, b[k, n..] one vector load, one
vector accumulator), and fusion appends the pointwise ops after the product (bias, activation) to
the same nest. For small products this beats a library call's fixed cost; max-autotune measures both
(the cpu target's rules name both candidates; compiler.py compiles each), options={"matmul": "loops"} forces it. Only floating-point products
change: an integer matmul stays a torch kernel (it is not worth generating).

Run before tensor-to-loop (which leaves matmuls as externs); pipeline.Plan.stage_passes places it.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir import apply_rules
from irc.ir.types import is_float

from .loop_builder import NestBuilder, shape


def matmul_nest(op: tn.MmOp | tn.BmmOp):
    """The nest computing op's product: space (batch..., M, K, N), K the one reduction."""
    b = NestBuilder()
    batch = len(shape(op.lhs)) - 2
    a_sizes, n = b.sizes(op.lhs), b.size(op.rhs, batch + 1)  # the other sizes of rhs equal lhs's (verified)
    m, k = a_sizes[-2], a_sizes[-1]
    b.set_space([*a_sizes[:batch], m, k, n], [loop.PARALLEL] * batch + [loop.PARALLEL, loop.REDUCTION, loop.PARALLEL])
    d = b.dims()
    lead, dm, dk, dn = d[:batch], d[batch], d[batch + 1], d[batch + 2]
    x, y = b.load(op.lhs, [*lead, dm, dk]), b.load(op.rhs, [*lead, dk, dn])
    return b.finish([b.reduce("sum", b.mul(x, y))], [op.result.type])


class LowerMatmul(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if isinstance(op, tn.MmOp | tn.BmmOp) and is_float(op.result.type.get_element_type()):
            ops = matmul_nest(op)
            for new in ops:
                if isinstance(new, tn.DimOp):
                    new.result.name_hint = "dim"  # else xDSL names it after the replaced op's result
            rewriter.replace(op, ops, list(ops[-1].results))


@dataclass(frozen=True)
class MatmulToLoopsPass(ModulePass):
    """Floating-point tn.mm and tn.bmm become loop nests (the generated matmul)."""

    name = "matmul-to-loops"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, (LowerMatmul(),))


__all__ = ["MatmulToLoopsPass", "matmul_nest"]
