"""split-addmm: a tensor-stage tn.addmm (a linear layer in bfloat16 or float16, as the importer takes aten.addmm)
becomes its float32 product, the bias added in float32 and one rounding, where no library call runs it whole.

    %r = tn.addmm %a, %b bias %c : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
 -> %r = tn.convert (tn.add (tn.convert %c), (tn.mm (tn.convert %a), (tn.convert %b))) : ... -> tensor<4x16xbf16>

The same numbers (bf16 x bf16 products are exact in float32, eager accumulates them in float32 and rounds once),
in ops generated code and the Triton dot template take: where the target's library has no kernels of its own for
that dtype (Rules.library_addmm: torch's float16 products on a CPU without AVX512-FP16 run a reference loop, 0.7
GFLOP/s where the float32 product runs 150), and for the generated products of matmul-to-loops
(Plan.stage_passes puts it first in the loop stage).
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


@dataclass
class SplitAddmm(RewritePattern):
    keep: tuple[str, ...]

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if not isinstance(op, tn.AddmmOp) or op.epilogue is not None:
            return
        narrow = op.result.type.get_element_type()
        if str(torch_dtype(narrow)).removeprefix("torch.") in self.keep:
            return
        f32 = element_type(torch.float32)
        wide = [tn.ConvertOp(v, f32) for v in (op.lhs, op.rhs, op.bias)]
        mm = tn.MmOp(wide[0].result, wide[1].result, TensorType(f32, shape(op.result)))
        add = tn.AddOp(wide[2].result, mm.result, mm.result.type)
        rewriter.replace(op, [*wide, mm, add, tn.ConvertOp(add.result, narrow)])
        for new in (*wide, mm, add):
            new.result.name_hint = None  # else xDSL names them all after the replaced result


@dataclass(frozen=True)
class SplitAddmmPass(ModulePass):
    """Each tensor-stage tn.addmm becomes tn.mm in float32, the bias add and one rounding, but those in the dtypes
    `keep` names (the target's library runs them whole: Rules.library_addmm)."""

    name = "split-addmm"
    keep: tuple[str, ...] = ()

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, (SplitAddmm(tuple(self.keep)),))


__all__ = ["SplitAddmmPass"]
