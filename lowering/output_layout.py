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
returns the view). Where the reordered nest only copies another nest's result in that result's own order (a
channels-last pool returned channels-last: the pool's nest is NHWC already), the view is of that result. Only a
nest of parallel dims with one result, read by nothing but the return and library calls, is reordered (a training
forward's q, k and v: the attention reads them and the backward gets them in eager's head-split layout); anything
else keeps the row-major result (and the runtime's copy).

The same reordering computes a heads-last attention's query heads-last, (batch, rows, heads, d), with every other
result of its nest (a training forward's q, k and v projections can be one nest): torch's flash kernel writes its output in its
query's layout, so the heads-last result needs no copy, nor does the backward's kernel copy q, k and v.

A channels-last int8 convolution's input that is a permuted view of a nest (the quantized image, computed NCHW and
read NHWC) is computed NHWC: oneDNN would otherwise copy the strided view into channels-last every call.

A result eager returns row-major (recorded as the identity order; not in a training forward, whose saved results
keep the program's layout) that is a permuted view of a library call's result (an NHWC region's convolution
returned NCHW) is copied by a nest of its own: the emitter transposes in tiles, several times faster than the
runtime's torch copy.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.passes import ModulePass

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir.types import DYN, is_float

from .fusion.legality import copy_source
from .loop_builder import NestBuilder

ATTR = "irc.output_layout"
INPUT_ATTR = "irc.input_layout"  # the same per argument: how the caller lays out each input (fold-permutes reads it)


def memory_order(sizes, strides) -> tuple[int, ...] | None:
    """The dims from outermost to innermost when `strides` is a dense permuted (not row-major) layout of `sizes`."""
    if (
        len(sizes) < 2
        or any(not isinstance(n, int) or n < 2 for n in sizes)
        or not all(isinstance(s, int) for s in strides)
    ):
        return None  # a size-1 dim's stride is arbitrary; dynamic sizes or strides: no static layout to match
    order = tuple(sorted(range(len(sizes)), key=lambda d: -strides[d]))
    step = 1
    for d in reversed(order):
        if strides[d] != step:
            return None
        step *= sizes[d]
    return None if order == tuple(range(len(sizes))) else order


def orders_of(f: func.FuncOp, name: str = ATTR) -> list[tuple[int, ...]]:
    attr = f.attributes.get(name)
    return [tuple(x.value.data for x in a.data) for a in attr.data] if isinstance(attr, ArrayAttr) else []


def layout_attr(orders: list[tuple[int, ...]]) -> ArrayAttr:
    """@main's irc.output_layout (or irc.input_layout) for per-result (per-argument) orders: () for unknown (and
    for row-major where the backend does not record it, the identity order where it does)."""
    return ArrayAttr([ArrayAttr([IntegerAttr(d, 64) for d in order]) for order in orders])


def record(module: ModuleOp, name: str, orders: list[tuple[int, ...]]) -> None:
    """Put per-value orders on @main as `name` (ATTR or INPUT_ATTR), unless every one is unknown (())."""
    if any(orders):
        main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
        main.attributes[name] = layout_attr(orders)


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
    space = AffineMap(0, nsyms, tuple(nest.extents[d] for d in order))
    kinds = nest.iterator_kinds()
    types = [TensorType(r.type.get_element_type(), [r.type.get_shape()[d] for d in order]) for r in nest.res]
    new = loop.NestOp(space, [kinds[d] for d in order], list(nest.symbols), types)
    ops = list(body.ops)
    for op in ops:
        op.detach()
    new.body.block.add_ops(ops)
    return new


def _eligible(v: SSAValue, order, ret) -> bool:
    """A permutation of the result's dims (irc-opt's input may say anything) over a nest this pass may reorder,
    returned once and otherwise read only by library calls (which take a strided view as eager gives them one)."""
    shape = v.type.get_shape()
    return (
        sorted(order) == list(range(len(order)))
        and len(order) == len(shape)
        and _parallel_static(v.owner, shape)
        and len(v.owner.res) == 1
        and [u.operation for u in v.uses].count(ret) == 1
        and _read_in_place(v, ret)
    )


def _query_nest(op, ret) -> loop.NestOp | None:
    """The nest computing a heads-last attention's query, where this pass may compute all its results heads-last:
    torch's flash kernel writes its output in its query's layout, and a query computed (batch, heads, rows, d) gave a
    copy into the heads-last result every call (a training forward's fused q, k, v nest; nn.MultiheadAttention's is
    rank 3, (batch * heads, rows, d), and left alone)."""
    if not isinstance(op, tn.ScaledDotProductAttentionOp) or op.heads_last is None:
        return None
    nest, shape = op.query.owner, op.query.type.get_shape()
    if not _parallel_static(nest, shape):
        return None
    return nest if all(r.type.get_shape() == shape and _read_in_place(r, ret) for r in nest.res) else None


def _parallel_static(nest, shape) -> bool:
    """A nest this pass may reorder: parallel dims only, its results static and of its rank (`shape`)."""
    return isinstance(nest, loop.NestOp) and not nest.reduction_dims() and DYN not in shape and nest.rank == len(shape)


def _read_in_place(v: SSAValue, ret) -> bool:
    """Is `v` read only by the return and by library calls, which take it through any strides?"""
    return all(u.operation is ret or _strided_reader(u.operation) for u in v.uses)


def _reorder_with_views(block, old: loop.NestOp, order) -> None:
    """`old` replaced by its reordered nest and a view of each of its results in the old dims; a reordered nest that
    only copies another nest's result in that result's own order is dropped, the view taken of that result."""
    new = reorder_dims(old, order)
    view_map = AffineMap(len(order), 0, tuple(AffineExpr.dimension(d) for d in order))
    source = _copied(new)
    results = [source] if source is not None else list(new.res)
    views = [loop.ViewOp(r, view_map, o.type) for r, o in zip(results, old.res)]
    block.insert_ops_before([*([] if source is not None else [new]), *views], old)
    for o, v in zip(old.res, views):
        o.replace_all_uses_with(v.result)
    block.erase_op(old)
    if source is not None:
        new.erase()


def _copied(nest: loop.NestOp) -> SSAValue | None:
    """The value `nest` copies element for element in its own order, where that is a nest's result read by nothing
    else. A channels-last pool returned channels-last is computed NHWC, and its reordered copy would copy it into a
    buffer of the same layout: one more pass that writes and reads the whole result for nothing."""
    load = copy_source(nest)
    if load is None or load.source.type != nest.res[0].type or not isinstance(load.source.owner, loop.NestOp):
        return None
    m = load.map.data
    identity = m.num_symbols == 0 and list(m.results) == [AffineExpr.dimension(d) for d in range(nest.rank)]
    return load.source if identity and load.source.has_one_use() else None


def _strided_reader(op) -> bool:
    """A tn op left at the loop stage (an extern) that reads its operands through any strides: not a reshape (it
    needs its source contiguous) and not a check (it reads the buffer the gather reads)."""
    return op.name.startswith("tn.") and op.name not in ("tn.reshape", "tn.check_index", "tn.dim")


def _permutation(v: SSAValue) -> loop.ViewOp | None:
    """v's view when it only permutes the dims of a static value that is not itself a view (an extern's result,
    which the target allocates row-major, an argument, or a nest's result)."""
    view = v.owner
    if not isinstance(view, loop.ViewOp) or isinstance(view.source.owner, loop.ViewOp) or view.sizes:
        return None
    m, rank = view.map.data, len(v.type.get_shape())
    dims = [e.position if isinstance(e, AffineDimExpr) else None for e in m.results]
    if len(dims) != rank or sorted(d for d in dims if d is not None) != list(range(rank)) or dims == list(range(rank)):
        return None
    return view if DYN not in v.type.get_shape() else None


def _permuted_view(v: SSAValue) -> loop.ViewOp | None:
    """v's view when it permutes a static float value (_permutation): returned as it is, the runtime would copy it
    into eager's strides."""
    return _permutation(v) if is_float(v.type.get_element_type()) else None


def _copy_row_major(block, view: loop.ViewOp, ret, i: int) -> None:
    """The return's i-th operand, a permuted view, replaced by a nest copying it row-major: irc's emitter transposes
    in tiles, several times faster than the runtime's copy (torch's copy_) of a channels-last tensor into NCHW."""
    shape = list(view.result.type.get_shape())
    b = NestBuilder(shape)
    ops = b.finish([b.load(view.source, list(view.map.data.results))], [view.result.type])
    block.insert_ops_before(ops, ret)
    ret.operands = [ops[-1].results[0] if k == i else o for k, o in enumerate(ret.operands)]


def _dense_for_convolution(block, view: loop.ViewOp) -> None:
    """The nest behind `view`, a permutation read only as channels-last int8 convolutions' input, computed in the
    view's order: the convolutions then read it dense (their input a view would be a strided one, which oneDNN copies
    into channels-last per call)."""
    nest, shape = view.source.owner, view.result.type.get_shape()
    if not (
        _parallel_static(nest, view.source.type.get_shape())
        and len(nest.res) == 1
        and view.source.has_one_use()
        and view.result.uses
        and all(
            isinstance(u.operation, tn.QConvOp) and u.operation.channels_last is not None and u.index == 0
            for u in view.result.uses
        )
    ):
        return
    m = view.map.data
    dims = [e.position for e in m.results]  # the source dim of each view dim's position
    order = tuple(dims.index(k) for k in range(len(shape)))  # view dim k is source dim order[k]
    new = reorder_dims(nest, order)
    block.insert_op_before(new, nest)
    view.result.replace_all_uses_with(new.res[0])
    block.erase_op(view)
    block.erase_op(nest)


@dataclass(frozen=True)
class OutputLayoutPass(ModulePass):
    """Results @main's irc.output_layout gives a permuted layout are computed in it (a reordered nest and a view)."""

    name = "output-layout"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        for f in module.ops:
            if (
                not isinstance(f, func.FuncOp) or f.sym_name.data != "main" or not f.body.blocks
            ):  # a declaration: no body
                continue
            block = f.body.block
            ret = block.last_op
            for i, order in enumerate(orders_of(f)):
                if i >= len(ret.operands) or not order:
                    continue
                if order == tuple(range(len(order))):  # eager's row-major, recorded as such: not a permuted view
                    if (view := _permuted_view(ret.operands[i])) is not None:
                        _copy_row_major(block, view, ret, i)
                elif _eligible(ret.operands[i], order, ret):
                    _reorder_with_views(block, ret.operands[i].owner, order)
            for op in list(block.ops):
                if isinstance(op, loop.ViewOp) and _permutation(op.result) is not None:
                    _dense_for_convolution(block, op)
            for op in list(block.ops):
                if (nest := _query_nest(op, ret)) is not None:
                    r = nest.rank
                    _reorder_with_views(block, nest, (*range(r - 3), r - 2, r - 3, r - 1))  # heads after rows


__all__ = ["OutputLayoutPass", "memory_order", "orders_of", "layout_attr", "record", "ATTR", "INPUT_ATTR"]
