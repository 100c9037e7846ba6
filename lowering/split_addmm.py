"""split-addmm: narrow products the library cannot run whole become float32 products of the widened operands,
rounded once.

A tensor-stage tn.addmm (a linear layer in bfloat16 or float16, as the importer takes aten.addmm) becomes its
float32 product, the bias added in float32 and one rounding, where no library call runs it whole:

    %r = tn.addmm %a, %b bias %c : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
 -> %r = tn.convert (tn.add (tn.convert %c), (tn.mm (tn.convert %a), (tn.convert %b))) : ... -> tensor<4x16xbf16>

The same numbers (bf16 x bf16 products are exact in float32, eager accumulates them in float32 and rounds once),
in ops generated code and the Triton dot template take: where the target's library has no kernels of its own for
that dtype (Rules.library_addmm), and for the generated products of matmul-to-loops (Plan.stage_passes puts it
first in the loop stage).

tn.mm, tn.bmm, tn.convolution and tn.convolution_backward in a dtype `widen` names (Rules.widened_products: the
narrow dtypes for which torch's CPU library has no kernels of its own and runs a reference loop, float16 on a CPU
without AVX512-FP16: 1-5 GFLOP/s where float32 runs 40-150) become the same op in float32 on widened operands,
each result rounded once, as eager's reference loop accumulates in float32 and rounds once.

tn.sdpa_backward in a dtype `attention` names (Rules.widened_attention_backward: torch's CPU flash-attention
backward in bf16 and f16 took 2-3x its float32 time on the same values, widening included) becomes the float32
one on its widened operands, each gradient rounded once.

Where the rules widen a dtype, the pass also ends tensor-opt (Plan.stage_passes), so that a frozen graph's weights
are widened by the freezer's second fold (Freezer.refold: float32 constants made once) rather than by a tn.convert
in every call; at the loop stage it then finds those products in float32 already.
"""

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irc.dialects import tensor as tn
from irc.ir import apply_rules
from irc.ir.types import element_type, torch_dtype

from .loop_builder import shape

PRODUCTS = (tn.MmOp, tn.BmmOp, tn.ConvolutionOp, tn.ConvolutionBackwardOp)
ATTENTION = tn.ScaledDotProductAttentionBackwardOp


def _name(t) -> str:
    return str(torch_dtype(t.get_element_type())).removeprefix("torch.")


def _wide(t, f32):
    return TensorType(f32, t.get_shape()) if isinstance(t, TensorType) else t


@dataclass
class SplitAddmm(RewritePattern):
    keep: tuple[str, ...]

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if not isinstance(op, tn.AddmmOp) or op.epilogue is not None or _name(op.result.type) in self.keep:
            return
        narrow, f32 = op.result.type.get_element_type(), element_type(torch.float32)
        wide = [tn.ConvertOp(v, f32) for v in (op.lhs, op.rhs, op.bias)]
        mm = tn.MmOp(wide[0].result, wide[1].result, TensorType(f32, shape(op.result)))
        add = tn.AddOp(wide[2].result, mm.result, mm.result.type)
        rewriter.replace(op, [*wide, mm, add, tn.ConvertOp(add.result, narrow)])
        for new in (*wide, mm, add):
            new.result.name_hint = None  # else xDSL names them all after the replaced result


@dataclass
class WidenProduct(RewritePattern):
    widen: tuple[str, ...]
    attention: tuple[str, ...] = ()

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        dtypes = self.widen if isinstance(op, PRODUCTS) else self.attention if isinstance(op, ATTENTION) else ()
        if not dtypes or _name(op.results[0].type) not in dtypes:
            return
        narrow, f32 = op.results[0].type.get_element_type(), element_type(torch.float32)
        # the narrow operands (attention's logsumexp is float32 already, a boolean mask stays one)
        wide = [tn.ConvertOp(v, f32) for v in op.operands if v.type.get_element_type() == narrow]
        widened = iter(w.result for w in wide)
        new = type(op).create(  # the same op, properties and all, on the float32 operands
            operands=[next(widened) if v.type.get_element_type() == narrow else v for v in op.operands],
            result_types=[_wide(r.type, f32) for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        back = [tn.ConvertOp(r, narrow) for r in new.results]
        rewriter.replace(op, [*wide, new, *back], [b.result for b in back])
        for w in wide:
            w.result.name_hint = None
        for r in new.results:
            r.name_hint = None


@dataclass(frozen=True)
class SplitAddmmPass(ModulePass):
    """Each tensor-stage tn.addmm becomes tn.mm in float32, the bias add and one rounding, but those in the dtypes
    `keep` names (the target's library runs them whole: Rules.library_addmm); mm, bmm and the convolutions in the
    dtypes `widen` names (Rules.widened_products) become float32 products rounded once, and so does
    tn.sdpa_backward in the dtypes `attention` names (Rules.widened_attention_backward)."""

    name = "split-addmm"
    keep: tuple[str, ...] = ()
    widen: tuple[str, ...] = ()
    attention: tuple[str, ...] = ()

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        widen = WidenProduct(tuple(self.widen), tuple(self.attention))
        apply_rules(module, (SplitAddmm(tuple(self.keep)), widen))


__all__ = ["SplitAddmmPass"]
