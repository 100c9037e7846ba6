"""Fusion mechanics: build the fused nest a legal plan describes. No decisions are taken here.

Vertical: the consumer's body is copied in order; at each load of the producer, the producer's
body is cloned with its dims replaced by the load's index expressions (once per distinct
expression tuple) and the load becomes the cloned yield value. Sibling: both bodies side by
side. Maps are re-simplified with the fused space's extents. After a fusion the block is
re-sorted topologically (stable, only the span it changes), so a kept producer output dominates its
other users.

Where a fused load reads an op's result that its store rounds to bf16/f16 (a truncf marked OP_ROUNDING: an op's
own rounding, not the program's cast) and the consumer widens it back, the consumer takes the float32 value
before the rounding: a fused chain keeps its intermediates in float32 and rounds once, at its store, as inductor's
kernels do (Dynamo writes c / x as reciprocal(x) * c, addcdiv's value as its own mul: rounded per op they are off
by up to an ulp, and by hundreds where x + v * a / b cancels).
"""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap
from xdsl.traits import is_side_effect_free

from irc.dialects import loop

from ..affine_simplify import simplify_map
from ..loop_builder import OP_ROUNDING
from .legality import EpiloguePlan, SiblingPlan, VerticalPlan, scan_late
from .order import BlockOrder


def static_extents(nest: loop.NestOp) -> list[int | None]:
    return [e.value if isinstance(e, AffineConstantExpr) else None for e in nest.extents]


def remap(
    m: AffineMap, dims: Sequence[AffineExpr], syms: Sequence[AffineExpr], rank: int, nsyms: int, extents
) -> AffineMap:
    """m with its first dims replaced by `dims`, its extra (index-operand) dims renumbered after `rank`, and `syms`."""
    extra = m.num_dims - len(dims)
    sub = list(dims) + [AffineExpr.dimension(rank + t) for t in range(extra)]
    out = AffineMap(rank + extra, nsyms, tuple(e.replace_dims_and_symbols(sub, syms) for e in m.results))
    return simplify_map(out, list(extents) + [None] * extra)


def clone_body(
    nest: loop.NestOp, into: list[Operation], dims, syms, rank: int, nsyms: int, extents, move: bool = False
) -> list[SSAValue]:
    """Clone the nest's body (without its yield) at the point `dims`; return the yielded values. move: take the
    ops themselves out of the nest (its last use: the nest is erased next), which costs no copy: a nest that
    grows by fusing with many small ones one by one then costs their sizes, not the square of its own."""
    mapper: dict[SSAValue, SSAValue] = {}
    for op in list(nest.body.block.ops):
        if isinstance(op, loop.YieldOp):
            return [mapper.get(v, v) for v in op.values]
        if move:
            op.detach()
            new = op
        else:
            new = op.clone(value_mapper=mapper)
        if isinstance(op, loop.LoadOp | loop.IndexOp):
            new.properties["map"] = AffineMapAttr(remap(op.map.data, dims, syms, rank, nsyms, extents))
        into.append(new)
    raise AssertionError("nest without yield")


def _own_syms(n: int) -> list[AffineExpr]:
    return [AffineExpr.symbol(j) for j in range(n)]


def build_nest(space: Sequence[AffineExpr], nsyms: int, reduction, symbols, result_types, ops, yields) -> loop.NestOp:
    kinds = [loop.REDUCTION if d in reduction else loop.PARALLEL for d in range(len(space))]
    nest = loop.NestOp(AffineMap(0, nsyms, tuple(space)), kinds, symbols, result_types)
    nest.body.block.add_ops([*ops, loop.YieldOp(*yields)])
    return nest


def fuse_vertical(plan: VerticalPlan, order: BlockOrder) -> loop.NestOp:
    p, c = plan.producer, plan.consumer
    start = p.prev_op
    n, rank, ext = len(plan.symbols), c.rank, static_extents(c)
    sites = dict(plan.sites)
    ident = tuple(plan.identity) if plan.keep else None
    # The producer's body at each distinct site (and at the identity, for the results it keeps); the last copy
    # takes the ops themselves unless the producer stays for other users.
    points = list(
        dict.fromkeys([*(sites[op] for op in c.body.block.ops if op in sites), *([ident] if plan.keep else [])])
    )
    last = points[-1] if points and not plan.stays else None
    inlined: dict[tuple, list[SSAValue]] = {}
    ops: list[Operation] = []
    results = list(p.results)

    def inline(key: tuple) -> list[SSAValue]:
        if key not in inlined:
            inlined[key] = clone_body(p, ops, list(key), plan.sym_remap, rank, n, ext, move=key == last)
        return inlined[key]

    yields: list[SSAValue] = []
    for op in list(c.body.block.ops):  # the consumer's ops themselves: it is erased below
        if op in sites:
            op.result.replace_all_uses_with(inline(sites[op])[results.index(op.source)])
            continue
        if isinstance(op, loop.YieldOp):
            yields = list(op.values)
            break
        op.detach()
        if isinstance(op, loop.LoadOp | loop.IndexOp) and op.map.data.num_symbols != n:
            m = op.map.data
            op.properties["map"] = AffineMapAttr(AffineMap(m.num_dims, n, m.results))
        ops.append(op)
    types = [r.type for r in c.results]
    if plan.keep:
        yields += inline(ident)
        types += [r.type for r in p.results]
    fused = build_nest(c.extents, n, plan.reduction, plan.symbols, types, ops, yields)
    c.parent_block().insert_op_before(fused, c)
    order.take_place(fused, c)
    for old, new in zip(c.results, fused.results):
        old.replace_all_uses_with(new)
    if plan.keep:
        for old, new in zip(p.results, fused.results[len(c.results) :]):
            old.replace_all_uses_with(new)
    _erase(c)
    if not any(r.uses for r in p.results):
        _erase(p)
    if plan.keep:  # only then did results defined before the consumer move to it
        reschedule(fused, start, order)
    return fused


def _erase(nest: loop.NestOp) -> None:
    """Erase a nest whose body may have been taken (clone_body's move): drop what is left of it first."""
    for op in reversed(list(nest.body.block.ops)):
        op.detach()
        op.erase(safe_erase=False)
    nest.detach()
    nest.erase()


def fuse_epilogue(plan: EpiloguePlan, order: BlockOrder) -> loop.NestOp:
    """The producer's body, then the consumer's at the producer's parallel dims; yields both sets of outputs."""
    p, c = plan.producer, plan.consumer
    start = p.prev_op
    n, rank, ext = len(plan.symbols), p.rank, static_extents(p)
    ops: list[Operation] = []
    yp = clone_body(
        p, ops, [AffineExpr.dimension(d) for d in range(rank)], _own_syms(len(p.symbols)), rank, n, ext, move=True
    )
    mapper: dict[SSAValue, SSAValue] = {}
    yc: list[SSAValue] = []
    for op in c.body.block.ops:
        if isinstance(op, loop.LoadOp) and op.source in p.results:
            mapper[op.result] = yp[list(p.results).index(op.source)]
            continue
        if isinstance(op, loop.YieldOp):
            yc = [mapper.get(v, v) for v in op.values]
            break
        new = op.clone(value_mapper=mapper)
        if isinstance(op, loop.LoadOp | loop.IndexOp):
            new.properties["map"] = AffineMapAttr(remap(op.map.data, list(plan.dims), plan.sym_remap, rank, n, ext))
        ops.append(new)
    types = [r.type for r in p.results] + [r.type for r in c.results]
    fused = build_nest(p.extents, n, p.reduction_dims(), plan.symbols, types, ops, yp + yc)
    c.parent_block().insert_op_before(fused, c)
    order.take_place(fused, c)
    for old, new in zip([*p.results, *c.results], fused.results):
        old.replace_all_uses_with(new)
    for op in (c, p):
        _erase(op)
    reschedule(fused, start, order)
    return fused


def retype_output(producer: loop.NestOp, consumer: loop.NestOp, k: int, order: BlockOrder) -> loop.NestOp:
    """The producer writing output k in the consumer's shape (same elements, size-1 dims added or dropped)."""
    types = [r.type for r in producer.results]
    types[k] = consumer.res[0].type
    new = loop.NestOp(
        producer.space.data, producer.iterator_kinds(), producer.symbols, types, body=producer.body.clone()
    )
    new.attributes.update(producer.attributes)
    producer.parent_block().insert_op_before(new, producer)
    order.take_place(new, producer)
    for i, (old, res) in enumerate(zip(producer.results, new.results)):
        (consumer.res[0] if i == k else old).replace_all_uses_with(res)
    for op in (consumer, producer):
        op.detach()
        op.erase()
    return new


def fuse_sibling(plan: SiblingPlan, order: BlockOrder) -> loop.NestOp:
    a, b = plan.first, plan.second
    start = a.prev_op
    n, rank, ext = len(plan.symbols), a.rank, static_extents(a)
    ops: list[Operation] = []
    ya = clone_body(
        a, ops, [AffineExpr.dimension(d) for d in range(rank)], _own_syms(len(a.symbols)), rank, n, ext, move=True
    )
    yb = clone_body(b, ops, [AffineExpr.dimension(d) for d in range(rank)], plan.sym_remap, rank, n, ext, move=True)
    types = [r.type for r in a.results] + [r.type for r in b.results]
    fused = build_nest(a.extents, n, plan.reduction, plan.symbols, types, ops, ya + yb)
    b.parent_block().insert_op_before(fused, b)
    order.take_place(fused, b)
    for old, new in zip([*a.results, *b.results], fused.results):
        old.replace_all_uses_with(new)
    for op in (a, b):
        _erase(op)
    reschedule(fused, start, order)
    return fused


def merge_scalars(members: list[loop.NestOp], order: BlockOrder) -> loop.NestOp | None:
    """One 0-d nest in place of `members` (0-d nests in block order, each reading only arguments, earlier members
    and values made before the first member), where the first stood: their bodies moved in order, a load of an
    earlier member becoming the value it yielded; the fused nest yields the members' results that something else
    reads (None, the members erased, when nothing does: a nest of no results is invalid). Linear in the members'
    ops."""
    inside = set(members)
    outside = [r for m in members for r in m.results if any(order.top(u.operation) not in inside for u in r.uses)]
    if not outside:
        for m in reversed(members):  # a later member may read an earlier one: erase readers first
            _erase(m)
        return None
    value_of: dict[SSAValue, SSAValue] = {}
    ops: list[Operation] = []
    for m in members:
        for op in list(m.body.block.ops):
            if isinstance(op, loop.YieldOp):
                value_of.update(zip(m.results, op.values))
                break
            if isinstance(op, loop.LoadOp) and op.source in value_of:
                op.result.replace_all_uses_with(value_of[op.source])
                continue
            op.detach()
            ops.append(op)
    fused = build_nest((), 0, (), [], [r.type for r in outside], ops, [value_of[r] for r in outside])
    members[0].parent_block().insert_op_before(fused, members[0])
    order.take_place(fused, members[0])
    for old, new in zip(outside, fused.results):
        old.replace_all_uses_with(new)
    for m in reversed(members):  # a member's leftover loads read earlier members
        _erase(m)
    return fused


def reschedule(fused: loop.NestOp, start: Operation | None, order: BlockOrder) -> None:
    """Each op after what it uses again, once `fused` has taken over the results of an op that stood after
    `start`: the ops in between that read them, and the ops that depend on those (through values, or as the
    later of two ops with effects), move right after `fused`, in their order. This is what a stable
    topological sort of the block gives, at the cost of the ops it moves: they are found through use lists
    (a scan of the span is left for spans where an op with effects must move)."""
    if start is not None and start not in order.pos:  # an op the order does not know: scan the span
        return _move_after(fused, _scan_span(fused, start), order)
    lo = order.pos[start] if start is not None else None

    def in_span(op) -> bool:
        return op is not None and order.before(op, fused) and (lo is None or order.pos[op] > lo)

    late: set[Operation] = set()
    work = [fused]
    while work:
        for r in work.pop().results:
            for u in r.uses:
                t = order.top(u.operation)
                if t not in late and in_span(t):
                    late.add(t)
                    work.append(t)
    if not late:
        return
    if all(is_side_effect_free(op) for op in late):
        moved = sorted(late, key=order.pos.__getitem__)
    else:
        moved = _scan_span(fused, start)
    _move_after(fused, moved, order)


def _move_after(fused: loop.NestOp, moved: list[Operation], order: BlockOrder) -> None:
    if not moved:
        return
    assert not any(order.top(u.operation) is fused for m in moved for r in m.results for u in r.uses), (
        "fusion created a cycle"
    )
    block = fused.parent_block()
    for op in moved:
        op.detach()
    if fused.next_op is not None:
        block.insert_ops_before(moved, fused.next_op)
    else:
        block.add_ops(moved)
    order.moved_after(fused, moved)


def _scan_span(fused: loop.NestOp, start: Operation | None) -> list[Operation]:
    """The ops after `start` (the block's first without one) and before `fused` that must follow it."""
    return scan_late(fused, start.next_op if start is not None else fused.parent_block().first_op, fused)


def keep_wide(root: Operation) -> None:
    """In each fused body, an op's result rounded at its store (a truncf marked OP_ROUNDING) and widened back
    is read as the float32 value before the rounding, but where the widened value is stored (a yield: memory
    holds the graph's value, the operand a library product reads)."""
    for ext in root.walk():
        t = ext.input.owner if isinstance(ext, arith.ExtFOp) else None
        if isinstance(t, arith.TruncFOp) and OP_ROUNDING in t.attributes and t.input.type == ext.result.type:
            for use in list(ext.result.uses):
                if not isinstance(use.operation, loop.YieldOp):
                    use.operation.operands[use.index] = t.input
