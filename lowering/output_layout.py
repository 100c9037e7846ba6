"""output-layout: a result eager returns in a permuted dense layout is computed in that layout.

eager keeps an input's layout through pointwise ops: `x.t() * 2` is column-major, a channels-last
input gives channels-last results. Computed row-major, such a result needs a transposing copy
afterwards (the runtime hands outputs back with eager's strides). The backend records eager's
layout of each result on @main (`irc.output_layout`: per result the dims from outermost to
innermost in memory, [] for row-major or unknown); after fusion this pass reorders the dims of the
nest computing such a result to that order and returns a view:

    %r = loop.nest space = (A, B) ... : tensor<AxB>           %m = loop.nest space = (B, A) ... : tensor<BxA>
    func.return %r                                      ->    %r = loop.view %m[(d0, d1) -> (d1, d0)] : tensor<BxA> -> tensor<AxB>
                                                              func.return %r

so the result is written once, in eager's layout (bufferize allocates %m as the graph's output and
returns the view). Only a nest of parallel dims with one result, read by nothing but the return and library
calls, is reordered (a training forward's q, k and v: the attention reads them and the backward gets them in
eager's head-split layout); anything else keeps the row-major result (and the runtime's copy).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass

from irc.dialects import loop
from irc.ir.types import DYN

ATTR = "irc.output_layout"


def memory_order(sizes, strides) -> tuple[int, ...] | None:
    """The dims from outermost to innermost when `strides` is a dense permuted (not row-major) layout of `sizes`."""
    if len(sizes) < 2 or any(not isinstance(n, int) or n < 2 for n in sizes):
        return None  # a size-1 dim's stride is arbitrary; dynamic sizes: no static layout to match
    order = tuple(sorted(range(len(sizes)), key=lambda d: -strides[d]))
    step = 1
    for d in reversed(order):
        if strides[d] != step:
            return None
        step *= sizes[d]
    return None if order == tuple(range(len(sizes))) else order


def orders_of(f: func.FuncOp) -> list[tuple[int, ...]]:
    attr = f.attributes.get(ATTR)
    return [tuple(x.value.data for x in a.data) for a in attr.data] if isinstance(attr, ArrayAttr) else []


def layout_attr(orders: list[tuple[int, ...]]) -> ArrayAttr:
    """@main's irc.output_layout for per-result orders (() for row-major or unknown)."""
    return ArrayAttr([ArrayAttr([IntegerAttr(d, 64) for d in order]) for order in orders])


def reorder_dims(nest: loop.NestOp, order: tuple[int, ...]) -> loop.NestOp:
    """The nest with its dims in `order` (new dim k is old dim order[k]) and its result permuted alike."""
    rank, nsyms = nest.rank, len(nest.symbols)
    new_of = [AffineExpr.dimension(order.index(d)) for d in range(rank)]  # old dim d -> its new position
    syms = [AffineExpr.symbol(j) for j in range(nsyms)]
    body = nest.body.block
    for op in body.ops:
        if isinstance(op, loop.LoadOp | loop.IndexOp):
            m = op.map.data
            extra = [AffineExpr.dimension(rank + j) for j in range(m.num_dims - rank)]  # gathers' index dims stay
            results = tuple(e.replace_dims_and_symbols([*new_of, *extra], syms) for e in m.results)
            op.properties["map"] = type(op.properties["map"])(AffineMap(m.num_dims, m.num_symbols, results))
    t = nest.res[0].type
    space = AffineMap(0, nsyms, tuple(nest.extents[d] for d in order))
    kinds = nest.iterator_kinds()
    new = loop.NestOp(space, [kinds[d] for d in order], list(nest.symbols),
                      [TensorType(t.get_element_type(), [t.get_shape()[d] for d in order])])  # fmt: skip
    ops = list(body.ops)
    for op in ops:
        op.detach()
    new.body.block.add_ops(ops)
    return new


def _eligible(v: SSAValue, order, ret) -> bool:
    """A permutation of the result's dims (irc-opt's input may say anything) over a nest this pass may reorder,
    returned once and otherwise read only by library calls (which take a strided view as eager gives them one)."""
    nest = v.owner
    users = [u.operation for u in v.uses]
    return (sorted(order) == list(range(len(order))) and isinstance(nest, loop.NestOp) and len(nest.res) == 1
            and not nest.reduction_dims()
            and nest.rank == len(order) == len(v.type.get_shape()) and DYN not in v.type.get_shape()
            and users.count(ret) == 1 and all(u is ret or _strided_reader(u) for u in users))  # fmt: skip


def _strided_reader(op) -> bool:
    """A tn op left at the loop stage (an extern) that reads its operands through any strides: not a reshape (it
    needs its source contiguous) and not a check (it reads the buffer the gather reads)."""
    return op.name.startswith("tn.") and op.name not in ("tn.reshape", "tn.check_index", "tn.dim")


@dataclass(frozen=True)
class OutputLayoutPass(ModulePass):
    """Results @main's irc.output_layout gives a permuted layout are computed in it (a reordered nest and a view)."""

    name = "output-layout"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        for f in module.ops:
            if not isinstance(f, func.FuncOp) or f.sym_name.data != "main" or not f.body.blocks:  # a declaration: no body
                continue
            ret = f.body.block.last_op
            for i, order in enumerate(orders_of(f)):
                if not order or i >= len(ret.operands) or not _eligible(ret.operands[i], order, ret):
                    continue
                old = ret.operands[i].owner
                new = reorder_dims(old, order)
                view_map = AffineMap(len(order), 0, tuple(AffineExpr.dimension(d) for d in order))
                view = loop.ViewOp(new.res[0], view_map, old.res[0].type)
                f.body.block.insert_ops_before([new, view], old)
                old.res[0].replace_all_uses_with(view.result)
                f.body.block.erase_op(old)


__all__ = ["OutputLayoutPass", "memory_order", "orders_of", "layout_attr", "ATTR"]
