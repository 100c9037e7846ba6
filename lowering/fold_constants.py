"""fold-constants: a tn op whose operands are all constants is evaluated once, at compile time.

Constants are `tn.constant` ops and, when the frontend freezes an inference graph, the @main arguments
that hold parameters and buffers (`ConstantArgs.values`, by argument index, their real tensors). A
value is known when it is a constant or a foldable op of known values. A known op is evaluated when
some op that is not known reads it; views of known values (permute, reshape, expand, ...) are not
materialised on their own (a transposed copy of a weight would double its memory for nothing), only
through the computation that reads them. A result that holds one value becomes a splat `tn.constant`;
any other becomes a new @main argument appended at the end (`ConstantArgs.appended`, which the
frontend passes with every call). A view that torch can only copy (a weight's rows reordered: layout_rules
flatten_nhwc_into_product) is folded like a computation. The frontend folds a frozen graph before tensor-opt and
again after it, for what tensor-opt's rewrites made of constants. Without a ConstantArgs table (irc-opt) only
splat results are folded.

Evaluation is the op's meaning as torch, from the one table of op meanings (dialects/semantics) that the
reference target runs too; FOLDABLE below lists the ops worth folding.
"""

from dataclasses import dataclass, field

import torch
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.dialects.semantics import SEMANTICS


# the ops worth evaluating at compile time (their meaning is SEMANTICS[op class]); views are known too, but
# materialised only through an op that computes
_ARITHMETIC = (tn.AddOp, tn.SubOp, tn.MulOp, tn.DivOp, tn.NegOp, tn.RsqrtOp, tn.SqrtOp, tn.ReciprocalOp, tn.ExpOp)
_OTHERS = (tn.ConvertOp, tn.WhereOp, tn.EmbeddingOp, tn.IotaOp, tn.BatchNormInferenceOp, tn.CatOp)
VIEWS = (tn.PermuteOp, tn.ReshapeOp, tn.ExpandOp, tn.UnsqueezeOp)
FOLDABLE: frozenset[type] = frozenset(_ARITHMETIC + _OTHERS + VIEWS)


@dataclass
class ConstantArgs:
    """The @main arguments that are constants (index -> real tensor), and the ones folding appends."""

    values: dict[int, torch.Tensor] = field(default_factory=dict)
    appended: list[torch.Tensor] = field(default_factory=list)
    used: set[int] = field(default_factory=set)  # indices of `values` some folded constant was computed from
    folded: int = 0  # ops evaluated into a constant


def _static(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType) and v.type.has_static_shape()


class Folder:
    def __init__(self, main: func.FuncOp, table: ConstantArgs | None):
        self.main, self.table = main, table
        self.memo: dict[SSAValue, torch.Tensor] = {}
        self.is_known: dict[SSAValue, bool] = {}

    def known(self, v: SSAValue) -> bool:
        if v not in self.is_known:
            self.is_known[v] = self._known(v)
        return self.is_known[v]

    def _known(self, v: SSAValue) -> bool:
        if not _static(v):
            return False
        if isinstance(v, BlockArgument):
            return self.table is not None and v.block is self.main.body.block and v.index in self.table.values
        op = v.owner
        if isinstance(op, tn.ConstantOp):
            return True
        return type(op) in FOLDABLE and len(op.results) == 1 and all(self.known(o) for o in op.operands)

    def value(self, v: SSAValue) -> torch.Tensor:
        if v in self.memo:
            return self.memo[v]
        if isinstance(v, BlockArgument):
            self.table.used.add(v.index)
            out = self.table.values[v.index]
        else:  # tn.constant or a foldable op
            out = SEMANTICS[type(v.owner)](v.owner, *[self.value(o) for o in v.owner.operands])
        self.memo[v] = out
        return out

    def absorbs(self, user: Operation) -> bool:
        """A known op that computes folds, and takes what it reads with it; a known view passes it on to its readers."""
        if type(user) not in FOLDABLE or len(user.results) != 1 or not self.known(user.results[0]):
            return False
        return not isinstance(user, VIEWS) or all(self.absorbs(u.operation) for u in user.results[0].uses)

    def worth_folding(self, op: Operation) -> bool:
        """A known op that computes (or a view of tn.constant ops, or one that is no view of what it reads: a reshape
        torch must copy, as every call would) read by some op that does not absorb it."""
        if (
            isinstance(op, tn.ConstantOp)
            or type(op) not in FOLDABLE
            or len(op.results) != 1
            or not self.known(op.results[0])
        ):
            return False
        if (
            isinstance(op, VIEWS)
            and not all(isinstance(o.owner, tn.ConstantOp) for o in op.operands)
            and not self.copies(op)
        ):
            return False
        return any(not self.absorbs(u.operation) for u in op.results[0].uses)

    def copies(self, view: Operation) -> bool:
        """A reshape that torch can only copy (the other views never copy)."""
        return self.table is not None and isinstance(view, tn.ReshapeOp) and not self._layout(view.result)._is_view()

    def _layout(self, v: SSAValue) -> torch.Tensor:
        """A known value's sizes and strides as a meta tensor (reading nothing: a parameter only viewed stays unfrozen)."""
        if isinstance(v, BlockArgument):
            t = self.table.values[v.index]
            return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
        if isinstance(v.owner, VIEWS):
            return SEMANTICS[type(v.owner)](v.owner, *[self._layout(o) for o in v.owner.operands])
        return torch.empty(v.type.get_shape(), device="meta")  # a computed value is row-major

    def fold(self, op: Operation) -> bool:
        result = op.results[0]
        value = self.value(result).contiguous()
        flat = value.flatten()
        t = result.type
        if value.numel() and bool((flat == flat[0]).all()) and not value.dtype.is_complex:
            x = flat[0].item()
            attr = DenseIntOrFPElementsAttr.from_list(
                t, [float(x) if value.dtype.is_floating_point else int(x)]
            )  # a splat
            new = tn.ConstantOp(attr).result
            self.main.body.block.insert_op_before(new.owner, op)
        elif self.table is not None:
            self.table.appended.append(value)
            new = self.main.body.block.insert_arg(t, len(self.main.body.block.args))
            self.table.values[new.index] = value  # a constant like the others, for the folds still to come
            self.main.function_type = func.FunctionType.from_lists(
                [a.type for a in self.main.body.block.args], self.main.function_type.outputs.data
            )
        else:
            return False
        new.name_hint = result.name_hint
        result.replace_all_uses_with(new)
        if self.table is not None:
            self.table.folded += 1
        return True

    def run(self) -> bool:
        changed = False
        for op in list(self.main.body.block.ops):
            if self.worth_folding(op) and self.fold(op):
                changed = True
        return changed


def fold_constants(module: ModuleOp, table: ConstantArgs | None = None) -> bool:
    """Fold what can be folded in @main (every function when there is no table); True when anything changed."""
    changed = False
    for op in module.ops:
        if (
            isinstance(op, func.FuncOp) and op.body.blocks and (table is None or op.sym_name.data == "main")
        ):  # not declarations
            changed |= Folder(op, table).run()
    return changed


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Evaluate tn ops of constant operands at compile time (splat results only: frozen parameters come with the frontend)."""

    name = "fold-constants"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        fold_constants(module)


__all__ = ["FOLDABLE", "ConstantArgs", "FoldConstantsPass", "fold_constants"]
