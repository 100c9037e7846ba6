"""merge-products: sibling int8 products of one input and constant weights become one product, each result a slice.

    y1 = tn.qlinear_dynamic x, s, z, W1, ws1, wz1, b1        y  = tn.qlinear_dynamic x, s, z, cat(W1, W2), cat(ws1, ws2),
    y2 = tn.qlinear_dynamic x, s, z, W2, ws2, wz2, b2   ->                                 cat(wz1, wz2), cat(b1, b2)
                                                              y1 = tn.slice y dim 1 [0, n1);  y2 = tn.slice y dim 1 [n1, n1 + n2)

A transformer's query, key and value layers read the same activations: one library call of their weights side by side
reads (and, for dynamic quantization, converts) the activations once and runs one wider product, at a higher rate than
three narrow ones. The same holds for weight-only int8 products (tn.weight_int8_mm). The number of rows may be
dynamic; every per-output-row operand (weight, scales, zero points, bias) must be a static constant: a frozen graph's
refold (pipeline.refreeze) runs this with the frozen parameters' table, so fold-constants makes each concatenated
weight once; without a table (irc-opt) only tn.constant operands count. The merged op takes the place of the first sibling, so every operand it reads must be
defined before it (a frozen parameter is an argument of @main).
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from irc.dialects import tensor as tn
from irc.ir.types import DYN

from .fold_constants import ConstantArgs, Folder


@dataclass(frozen=True)
class _Form:
    """How one product op merges: the operands every sibling must share, the per-output-row ones (concatenated along
    their dim 0) and how to build the merged op from them."""

    shared: tuple[str, ...]
    rows: tuple[str, ...]
    build: Callable[..., Operation]  # build(first sibling, *merged row operands, result type)


FORMS: dict[type[Operation], _Form] = {
    tn.QLinearDynamicOp: _Form(
        ("input", "act_scale", "act_zero_point"),
        ("weight", "w_scale", "w_zero_point", "bias"),
        lambda op, w, ws, wz, b, t: tn.QLinearDynamicOp(
            op.input, op.act_scale, op.act_zero_point, w, ws, wz, b, t, op.post_op.data
        ),
    ),
    tn.WeightInt8MmOp: _Form(("input",), ("weight", "scale"), lambda op, w, s, t: tn.WeightInt8MmOp(op.input, w, s, t)),
}


def _static(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType) and v.type.has_static_shape()


def _key(op: Operation, form: _Form):
    """What siblings share: the shared operands, the row operands' element types (an absent bias absent in all), the
    properties."""
    rows = tuple(None if (v := getattr(op, n)) is None else v.type.get_element_type() for n in form.rows)
    return (
        tuple(getattr(op, n) for n in form.shared),
        rows,
        tuple(sorted((k, str(v)) for k, v in op.properties.items())),
    )


@dataclass(frozen=True)
class MergeSiblings(RewritePattern):
    """Merge the siblings of a product where it is the first of them (so that each group merges once, in its place)."""

    known: Callable[[SSAValue], bool]

    def _mergeable(self, op: Operation, form: _Form) -> bool:
        rows = [v for v in (getattr(op, n) for n in form.rows) if v is not None]
        return op.results[0].type.get_shape()[1] != DYN and all(self.known(v) and _static(v) for v in rows)

    def _siblings(self, op: Operation, form: _Form) -> list[Operation]:
        mine = _key(op, form)
        found = {
            u.operation
            for u in op.input.uses
            if type(u.operation) is type(op) and u.operation.parent is op.parent and _key(u.operation, form) == mine
        }
        block = op.parent
        return sorted((o for o in found if self._mergeable(o, form)), key=block.get_operation_index)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        form = FORMS.get(type(op))
        if form is None or op.parent is None:
            return
        group = self._siblings(op, form)
        if len(group) < 2 or group[0] is not op:
            return
        for name in form.rows:  # every row operand must exist where the merged op goes: at the first sibling
            for v in (getattr(o, name) for o in group):
                if v is not None and not (
                    isinstance(v, BlockArgument) or (v.owner.parent is op.parent and v.owner.is_before_in_block(op))
                ):
                    return
        new: list[Operation] = []
        rows = []
        for name in form.rows:
            parts = [getattr(o, name) for o in group]
            if parts[0] is None:
                rows.append(None)
                continue
            shape = [sum(p.type.get_shape()[0] for p in parts), *parts[0].type.get_shape()[1:]]
            new.append(tn.CatOp(parts, 0, TensorType(parts[0].type.get_element_type(), shape)))
            new[-1].result.name_hint = name  # not the replaced op's name, which its slice keeps
            rows.append(new[-1].result)
        m, el = op.results[0].type.get_shape()[0], op.results[0].type.get_element_type()
        widths = [o.results[0].type.get_shape()[1] for o in group]
        merged = form.build(op, *rows, TensorType(el, [m, sum(widths)]))
        merged.results[0].name_hint = "merged"
        new.append(merged)
        start = 0
        for o, n in zip(group, widths):
            piece = tn.SliceOp(merged.results[0], 1, start, start + n, 1, o.results[0].type)
            start += n
            if o is op:
                rewriter.replace(o, [*new, piece], [piece.result])
            else:
                rewriter.replace(o, [piece], [piece.result])


def merge_products(module: ModuleOp, table: ConstantArgs | None = None) -> bool:
    """Merge sibling products in @main (every function when there is no table); True when anything changed."""
    changed = False
    for f in module.ops:
        if isinstance(f, func.FuncOp) and (table is None or f.sym_name.data == "main"):
            folder = Folder(f, table)
            walker = PatternRewriteWalker(MergeSiblings(folder.known), apply_recursively=False)
            changed |= walker.rewrite_region(f.body)
    return changed


@dataclass(frozen=True)
class MergeProductsPass(ModulePass):
    """Sibling int8 products of one input and constant weights become one product (tn.constant weights only: frozen
    parameters come with the frontend's refold)."""

    name = "merge-products"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        merge_products(module)
