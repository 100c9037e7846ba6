"""Fusion mechanics: build the fused nest a legal plan describes. No decisions are taken here.

Vertical: the consumer's body is copied in order; at each load of the producer, the producer's
body is cloned with its dims replaced by the load's index expressions (once per distinct
expression tuple) and the load becomes the cloned yield value. Sibling: both bodies side by
side. Maps are re-simplified with the fused space's extents. After a fusion the block is
re-sorted topologically (stable), so a kept producer output dominates its other users.
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap
from xdsl.traits import IsTerminator, is_side_effect_free

from irc.dialects import loop

from ..affine_simplify import simplify_map
from .legality import EpiloguePlan, SiblingPlan, VerticalPlan


def static_extents(nest: loop.NestOp) -> list[int | None]:
    return [e.value if isinstance(e, AffineConstantExpr) else None for e in nest.extents]


def remap(m: AffineMap, dims: Sequence[AffineExpr], syms: Sequence[AffineExpr], rank: int, nsyms: int, extents) -> AffineMap:
    """m with its first dims replaced by `dims`, its extra (index-operand) dims renumbered after `rank`, and `syms`."""
    extra = m.num_dims - len(dims)
    sub = list(dims) + [AffineExpr.dimension(rank + t) for t in range(extra)]
    out = AffineMap(rank + extra, nsyms, tuple(e.replace_dims_and_symbols(sub, syms) for e in m.results))
    return simplify_map(out, list(extents) + [None] * extra)


def clone_body(nest: loop.NestOp, into: list[Operation], dims, syms, rank: int, nsyms: int, extents) -> list[SSAValue]:
    """Clone the nest's body (without its yield) at the point `dims`; return the yielded values."""
    mapper: dict[SSAValue, SSAValue] = {}
    for op in nest.body.block.ops:
        if isinstance(op, loop.YieldOp):
            return [mapper.get(v, v) for v in op.values]
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


def fuse_vertical(plan: VerticalPlan) -> loop.NestOp:
    p, c = plan.producer, plan.consumer
    n, rank, ext = len(plan.symbols), c.rank, static_extents(c)
    csyms = _own_syms(len(c.symbols))
    sites = dict(plan.sites)
    inlined: dict[tuple, list[SSAValue]] = {}
    ops: list[Operation] = []
    mapper: dict[SSAValue, SSAValue] = {}
    yields: list[SSAValue] = []
    for op in c.body.block.ops:
        if op in sites:
            key = sites[op]
            if key not in inlined:
                inlined[key] = clone_body(p, ops, list(key), plan.sym_remap, rank, n, ext)
            mapper[op.result] = inlined[key][list(p.results).index(op.source)]
            continue
        if isinstance(op, loop.YieldOp):
            yields = [mapper.get(v, v) for v in op.values]
            break
        new = op.clone(value_mapper=mapper)
        if isinstance(op, loop.LoadOp | loop.IndexOp):
            m = op.map.data
            new.properties["map"] = AffineMapAttr(AffineMap(m.num_dims, n, m.results))
        ops.append(new)
    types = [r.type for r in c.results]
    if plan.keep:
        ident = tuple(plan.identity)
        vals = inlined.get(ident) or clone_body(p, ops, list(ident), plan.sym_remap, rank, n, ext)
        yields += vals
        types += [r.type for r in p.results]
    fused = build_nest(c.extents, n, plan.reduction, plan.symbols, types, ops, yields)
    block = c.parent_block()
    block.insert_op_before(fused, c)
    for old, new in zip(c.results, fused.results):
        old.replace_all_uses_with(new)
    if plan.keep:
        for old, new in zip(p.results, fused.results[len(c.results):]):
            old.replace_all_uses_with(new)
    c.detach()
    c.erase()
    if not any(r.uses for r in p.results):
        p.detach()
        p.erase()
    reschedule(block)
    return fused


def fuse_epilogue(plan: EpiloguePlan) -> loop.NestOp:
    """The producer's body, then the consumer's at the producer's parallel dims; yields both sets of outputs."""
    p, c = plan.producer, plan.consumer
    n, rank, ext = len(plan.symbols), p.rank, static_extents(p)
    ops: list[Operation] = []
    yp = clone_body(p, ops, [AffineExpr.dimension(d) for d in range(rank)], _own_syms(len(p.symbols)), rank, n, ext)
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
    block = c.parent_block()
    block.insert_op_before(fused, c)
    for old, new in zip([*p.results, *c.results], fused.results):
        old.replace_all_uses_with(new)
    for op in (c, p):
        op.detach()
        op.erase()
    reschedule(block)
    return fused


def retype_output(producer: loop.NestOp, consumer: loop.NestOp, k: int) -> loop.NestOp:
    """The producer writing output k in the consumer's shape (same elements, size-1 dims added or dropped)."""
    types = [r.type for r in producer.results]
    types[k] = consumer.res[0].type
    new = loop.NestOp(producer.space.data, producer.iterator_kinds(), producer.symbols, types, body=producer.body.clone())
    new.attributes.update(producer.attributes)
    block = producer.parent_block()
    block.insert_op_before(new, producer)
    for i, (old, res) in enumerate(zip(producer.results, new.results)):
        (consumer.res[0] if i == k else old).replace_all_uses_with(res)
    for op in (consumer, producer):
        op.detach()
        op.erase()
    return new


def fuse_sibling(plan: SiblingPlan) -> loop.NestOp:
    a, b = plan.first, plan.second
    n, rank, ext = len(plan.symbols), a.rank, static_extents(a)
    ops: list[Operation] = []
    ya = clone_body(a, ops, [AffineExpr.dimension(d) for d in range(rank)], _own_syms(len(a.symbols)), rank, n, ext)
    yb = clone_body(b, ops, [AffineExpr.dimension(d) for d in range(rank)], plan.sym_remap, rank, n, ext)
    types = [r.type for r in a.results] + [r.type for r in b.results]
    fused = build_nest(a.extents, n, plan.reduction, plan.symbols, types, ops, ya + yb)
    block = b.parent_block()
    block.insert_op_before(fused, b)
    for old, new in zip([*a.results, *b.results], fused.results):
        old.replace_all_uses_with(new)
    for op in (a, b):
        op.detach()
        op.erase()
    reschedule(block)
    return fused


def used_values(op: Operation) -> list[SSAValue]:
    """Values defined outside `op` that it or its regions use."""
    out = list(op.operands)
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            owner = v.owner
            if isinstance(owner, Operation) and not op.is_ancestor(owner):
                out.append(v)
            elif isinstance(owner, Block) and not op.is_ancestor(owner):
                out.append(v)
    return out


def reschedule(block: Block) -> None:
    """Stable topological order: each op after what it uses; ops with effects keep their relative order."""
    import heapq

    ops = list(block.ops)
    index = {op: i for i, op in enumerate(ops)}
    deps: dict[Operation, set[Operation]] = {op: set() for op in ops}
    last_effect = None
    for op in ops:
        for v in used_values(op):
            if isinstance(v.owner, Operation) and v.owner in index:
                deps[op].add(v.owner)
        if not is_side_effect_free(op):
            if last_effect is not None:
                deps[op].add(last_effect)
            last_effect = op
    if ops and ops[-1].has_trait(IsTerminator):
        deps[ops[-1]] = set(ops[:-1])
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op, ds in deps.items():
        for d in ds:
            users[d].append(op)
    waiting = {op: len(ds) for op, ds in deps.items()}
    ready = [(index[op], op) for op in ops if not waiting[op]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, op = heapq.heappop(ready)
        order.append(op)
        for u in users[op]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (index[u], u))
    assert len(order) == len(ops), "fusion created a cycle"
    if order == ops:
        return
    for op in ops:
        op.detach()
    for op in order:
        block.add_op(op)
