"""Fusion legality: may two nests become one? Each check returns a plan, or a reason string when not.

Vertical (producer -> consumer): the producer's body is inlined at each consumer load of its
results, its dims replaced by the load's index expressions. A producer with reduction dims fuses
when every load reads its reduced outputs at index 0 along them (an epilogue over the rows it
reduced) and the consumer has dims of the same extents to carry the reduction; those become the
fused nest's reduction dims (the consumer's own reduction dims, if any, must be exactly these).
Sibling: two nests with no path between them that read a common input over the same space.
"""

from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr
from xdsl.traits import is_side_effect_free

from xdsl.dialects import arith

from irc import env
from irc.dialects import loop

from .order import BlockOrder


@dataclass
class VerticalPlan:
    producer: loop.NestOp
    consumer: loop.NestOp
    symbols: list[SSAValue]  # the fused nest's symbols: the consumer's, then the producer's others
    sym_remap: list[AffineExpr]  # producer symbol j -> symbol of the fused nest
    sites: list[tuple[loop.LoadOp, tuple[AffineExpr, ...]]]  # consumer load -> producer dim i -> expression
    reduction: tuple[int, ...]  # the fused nest's reduction dims (consumer dims)
    keep: bool = False  # the producer's results become extra results of the fused nest
    stays: bool = False  # the producer stays for other users (its work is duplicated)
    identity: tuple[AffineExpr, ...] | None = None  # producer dims -> fused dims, where keep computes its outputs


@dataclass
class SiblingPlan:
    first: loop.NestOp
    second: loop.NestOp
    symbols: list[SSAValue]
    sym_remap: list[AffineExpr]  # second's symbol j -> symbol of the fused nest
    reduction: tuple[int, ...]
    shared: list[SSAValue] = field(default_factory=list)


def merge_symbols(a: loop.NestOp, b: loop.NestOp) -> tuple[list[SSAValue], list[AffineExpr]]:
    syms = list(a.symbols)
    remap = []
    for s in b.symbols:
        if s not in syms:
            syms.append(s)
        remap.append(AffineExpr.symbol(syms.index(s)))
    return syms, remap


def extent_in(nest: loop.NestOp, d: int, remap: list[AffineExpr] | None) -> AffineExpr:
    e = nest.extents[d]
    return e if remap is None else e.replace_dims_and_symbols([], remap)


def reduced_dims(nest: loop.NestOp, result: SSAValue) -> set[int]:
    """The reduction dims along which an output of the nest has size 1 (holds a reduced value)."""
    if nest.output_kind(list(nest.results).index(result)) != "reduced":
        return set()
    return {d for d in nest.reduction_dims() if not _const(nest.extents[d], 1)}


# Test-only: IRC_TEST_MISCOMPILE=fusion-index makes fusion read every producer transposed (the last two index
# expressions of each fusion site swapped), a known miscompile the fuzzer must find and shrink
# (tests/fuzz/test_known_miscompile.py). Nothing else sets it.
TEST_MISCOMPILE = "IRC_TEST_MISCOMPILE"


def space_index(nest: loop.NestOp, ld: loop.LoadOp) -> tuple[AffineExpr, ...]:
    """A load's index into one of the nest's results, as an index into the nest's space."""
    m = tuple(loop.to_space_index(nest, list(nest.results).index(ld.source), ld.map.data.results))
    if len(m) >= 2 and env.get(TEST_MISCOMPILE) == "fusion-index":
        return m[:-2] + (m[-1], m[-2])
    return m


def _const(e: AffineExpr, v: int) -> bool:
    return isinstance(e, AffineConstantExpr) and e.value == v


def users_outside(value: SSAValue, nest: loop.NestOp) -> list[Operation]:
    """The ops of the nest's block (not the nest) that use the value, directly or inside their regions."""
    block = nest.parent_block()
    out: dict[Operation, None] = {}
    for u in value.uses:
        op = u.operation
        while op is not None and op.parent_block() is not block:
            op = op.parent_op()
        if op is not None and op is not nest:
            out.setdefault(op, None)
    return list(out)


def captured(op: Operation) -> list[SSAValue]:
    """The values an op uses: its operands and what its regions read from outside (loads' sources)."""
    vals = list(op.operands)
    if isinstance(op, loop.NestOp):
        vals += op.inputs()
    return vals


def depends_on(
    later: Operation,
    earlier: Operation | list[Operation],
    skip: Operation | None = None,
    order: BlockOrder | None = None,
) -> bool:
    """Is there a def-use path from `earlier` (an op, or any op of a list) to `later` within their block (not through
    `skip`)? One search backwards from `later`, only through ops placed after the first of them (no path leaves them)."""
    block = later.parent_block()
    order = order or BlockOrder(block)
    cands = {e for e in (earlier if isinstance(earlier, list) else [earlier]) if order.before(e, later)}
    if later is skip or not cands:
        return False
    lo = min(order.pos[e] for e in cands)
    seen, stack = {later}, [later]
    while stack:
        for v in captured(stack.pop()):
            d = v.owner
            if d in cands:
                return True
            if isinstance(d, Operation) and d not in seen and d is not skip and d.parent is block and order.pos[d] > lo:
                seen.add(d)
                stack.append(d)
    return False


def why_not_vertical(producer: Operation, consumer: loop.NestOp, order: BlockOrder | None = None) -> VerticalPlan | str:
    """A plan to inline `producer` into `consumer`, or why not."""
    if isinstance(producer, loop.ViewOp):
        return "producer is a view for an extern"
    if not isinstance(producer, loop.NestOp):
        return f"producer is an extern ({producer.name})"
    if producer.outs or consumer.outs:
        return "buffer-form nests do not fuse"
    if producer.parent_block() is not consumer.parent_block():
        return "nests are in different blocks"
    syms, remap = merge_symbols(consumer, producer)
    loads = [ld for ld in consumer.loads() if ld.source in producer.results]
    if any(ld.indices for ld in loads):
        return "consumer reads the producer through data-dependent indices"
    red_p = producer.reduction_dims()
    red_c = set(consumer.reduction_dims())
    sites, fused_red = [], None
    for ld in loads:
        if not red_p:
            sites.append((ld, _units_at_zero(space_index(producer, ld), consumer)))
            continue
        sub = _reduction_site(producer, consumer, ld, remap, red_c)
        if isinstance(sub, str):
            return sub
        exprs, tau = sub
        if fused_red is not None and fused_red != tau:
            return "loads of the producer disagree on the reduction dims"
        fused_red = tau
        sites.append((ld, _units_at_zero(exprs, consumer)))
    reduction = tuple(sorted(red_c | (fused_red or set())))
    plan = VerticalPlan(producer, consumer, syms, remap, sites, reduction)
    others = [u for r in producer.results for u in users_outside(r, consumer) if u is not consumer]
    if others:
        ident = _identity(producer, consumer, remap, reduction)
        order = order or BlockOrder(consumer.parent_block())
        cycle = depends_on(consumer, [u for u in others if u.parent_block() is consumer.parent_block()], order=order)
        # a reshape by size-1 dims is read in place by every reader (same addresses, same order): never kept as a copy
        view = why_not_unit_reshape(producer) is None
        if ident is not None and not cycle and not view and not _reorders_effects(producer, consumer, order):
            plan.keep, plan.identity = True, ident
        else:
            plan.stays = True
    return plan


def _reorders_effects(producer: Operation, consumer: loop.NestOp, order: BlockOrder) -> bool:
    """Would defining the producer's results where the consumer stands (a kept vertical fusion, a sibling fusion)
    move, after the fused nest, an op the consumer reads? The ops between the two that read those results move after
    it (transform.reschedule), and when one of them has effects, so does every later op with effects, to keep their
    order: the consumer may read one of those (an eager fallback on another input, seed 1201). Without effects among
    the readers the callers' path checks hold."""
    readers, work = set(), [producer]
    while work:
        for r in work.pop().results:
            for u in r.uses:
                t = order.top(u.operation)
                if t is not None and t not in readers and order.before(t, consumer):
                    readers.add(t)
                    work.append(t)
    if all(is_side_effect_free(op) for op in readers):
        return False
    moved = scan_late(producer, producer.next_op, consumer)
    return bool(moved) and depends_on(consumer, moved, order=order)


def scan_late(late_op: Operation, first: Operation | None, stop: Operation) -> list[Operation]:
    """The ops from `first` up to (not including) `stop` that must follow `late_op` once its results are defined
    at `stop`: the users of what moves, and every op with effects after one with effects that moves (they keep their
    order). A scan of the span, for transform.reschedule and the legality checks that foresee it."""
    moved: list[Operation] = []
    late = {late_op}
    effects_late = False  # the last op with effects seen so far is late
    op = first
    while op is not None and op is not stop:
        effectful = not is_side_effect_free(op)
        if any(v.owner in late for v in used_values(op)) or (effectful and effects_late):
            late.add(op)
            moved.append(op)
        if effectful:
            effects_late = op in late
        op = op.next_op
    return moved


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


def _reduction_site(producer, consumer, ld: loop.LoadOp, remap, red_c: set[int]):
    """Producer dims -> consumer expressions at a load of a producer with reduction dims, and the dims carrying them."""
    m = space_index(producer, ld)
    reduced = reduced_dims(producer, ld.source)
    par_p = producer.parallel_dims()
    used = set().union(*(m[i].used_dims() for i in par_p)) if par_p else set()
    exprs: list[AffineExpr | None] = [m[i] if i in par_p else None for i in range(producer.rank)]
    tau: dict[int, int] = {}
    for j in producer.reduction_dims():
        if j in reduced:
            if not _const(m[j], 0):
                return "consumer reads a reduced output off index 0"
        elif isinstance(m[j], AffineDimExpr):
            tau[j] = m[j].position
        elif not (_const(m[j], 0) and _const(producer.extents[j], 1)):  # a unit dim read at 0: reduced as the others
            return "consumer reads the producer's reduction dim through a non-trivial map"
    free = [t for t in range(consumer.rank) if t not in used and t not in tau.values()]
    for j in producer.reduction_dims():
        if j in tau:
            continue
        want = extent_in(producer, j, remap)
        same_pos = [t for t in free if t == j and consumer.extents[t] == want]
        match = same_pos or [t for t in free if consumer.extents[t] == want]
        if red_c:
            match = [t for t in match if t in red_c]
        if not match:
            return "no consumer dim matches the producer's reduction extent"
        tau[j] = match[0]
        free.remove(match[0])
    for j, t in tau.items():
        if consumer.extents[t] != extent_in(producer, j, remap):
            return "reduction extents differ"
        exprs[j] = AffineExpr.dimension(t)
    carried = set(tau.values())
    if red_c and carried != red_c:
        return "reduction dims differ"
    if used & carried:
        return "producer's parallel dims would vary along the reduction"
    return tuple(exprs), carried


def _identity(producer: loop.NestOp, consumer: loop.NestOp, remap, reduction) -> tuple[AffineExpr, ...] | None:
    """Producer dim i -> fused dim i, when both spaces are the same (so the fused nest can also write its outputs)."""
    if producer.rank != consumer.rank:
        return None
    for d in range(producer.rank):
        if consumer.extents[d] != extent_in(producer, d, remap):
            return None
    if set(producer.reduction_dims()) - set(reduction):
        return None
    if producer.reduction_dims() and set(reduction) != set(producer.reduction_dims()):
        return None
    return _units_at_zero([AffineExpr.dimension(d) for d in range(producer.rank)], consumer)


def _units_at_zero(exprs, nest: loop.NestOp) -> tuple:
    """The same index with each dim of the nest's that has extent 1 read as 0, its one value: a site that reads a
    (1, L, N) producer at (0, l, n) and the identity (d0, l, n) are one point, one copy of the producer's body (a
    layer norm's reductions computed once where its rows' min and max read it and it also keeps its output)."""
    return tuple(
        AffineExpr.constant(0) if isinstance(e, AffineDimExpr) and _const(nest.extents[e.position], 1) else e
        for e in exprs
    )


@dataclass
class EpiloguePlan:
    """A consumer over the producer's reduced space, evaluated inside the producer (after its reductions)."""

    producer: loop.NestOp
    consumer: loop.NestOp
    symbols: list[SSAValue]  # the producer's, then the consumer's others
    sym_remap: list[AffineExpr]  # consumer symbol j -> symbol of the fused nest
    dims: tuple[AffineExpr, ...]  # consumer dim j -> producer dim (0 for size-1 dims)


def why_not_epilogue(producer: Operation, consumer: loop.NestOp, order: BlockOrder | None = None) -> EpiloguePlan | str:
    """May a pointwise consumer over exactly the producer's reduced space run inside the producer?"""
    if not isinstance(producer, loop.NestOp) or not producer.reduction_dims():
        return "producer has no reduction"
    if producer.outs or consumer.outs or consumer.reduction_dims():
        return "consumer reduces"
    syms, remap = merge_symbols(producer, consumer)
    par = [d for d in producer.parallel_dims() if not _const(producer.extents[d], 1)]
    inner = [j for j in range(consumer.rank) if not _const(consumer.extents[j], 1)]
    if len(par) != len(inner) or any(
        consumer.extents[j].replace_dims_and_symbols([], remap) != producer.extents[d] for j, d in zip(inner, par)
    ):
        return "consumer space is not the producer's reduced space"
    dims = [AffineExpr.constant(0)] * consumer.rank
    for j, d in zip(inner, par):
        dims[j] = AffineExpr.dimension(d)
    for ld in consumer.loads():
        if ld.source not in producer.results:
            continue
        if ld.indices or reduced_dims(producer, ld.source) != {
            d for d in producer.reduction_dims() if not _const(producer.extents[d], 1)
        }:
            return "consumer reads a full output of the producer"
        at = [e.replace_dims_and_symbols(dims, remap) for e in space_index(producer, ld)]
        if any(not (_const(e, 0) if d not in par else e == AffineExpr.dimension(d)) for d, e in enumerate(at)):
            return "consumer reads the producer's output off its own point"
    block = consumer.parent_block()
    others = [
        u
        for r in producer.results
        for u in users_outside(r, consumer)
        if u is not consumer and u.parent_block() is block
    ]
    order = order or (BlockOrder(block) if others else None)
    if others and depends_on(consumer, others, order=order):
        return "another user of the producer feeds the consumer"
    return EpiloguePlan(producer, consumer, syms, remap, tuple(dims))


def copy_source(nest: loop.NestOp) -> loop.LoadOp | None:
    """The load of a nest that only copies (one load, yielded, perhaps widened and narrowed back).

    Narrowing is a copy only back to the loaded type: f32 -> bf16 -> f32 rounds, it does not copy."""
    if len(nest.yield_op.values) != 1:
        return None
    v, narrowed = nest.yield_op.values[0], []
    while isinstance(v.owner, arith.TruncFOp | arith.ExtFOp):
        if isinstance(v.owner, arith.TruncFOp):
            narrowed.append(v.type)
        v = v.owner.input
    ld = v.owner
    if not isinstance(ld, loop.LoadOp) or ld.indices or any(t != v.type for t in narrowed):
        return None
    for op in nest.body.block.ops:  # nothing else but casts: stops at the first other op of a kernel's body
        if op is not ld and not isinstance(op, loop.YieldOp | arith.TruncFOp | arith.ExtFOp):
            return None
    return ld


def why_not_retype(producer: Operation, consumer: loop.NestOp) -> int | str:
    """The producer output the consumer merely re-shapes by size-1 dims (the producer can write that shape), or why not."""
    ld = copy_source(consumer)
    if ld is None or not isinstance(producer, loop.NestOp) or ld.source not in producer.results:
        return "consumer is not a copy"
    if producer.outs or consumer.outs:
        return "buffer-form nests do not fuse"
    if not ld.source.has_one_use():
        return "the producer output has other users"
    if (why := why_not_unit_reshape(consumer, ld)) is not None:
        return why
    return list(producer.results).index(ld.source)


def why_not_unit_reshape(nest: loop.NestOp, ld: loop.LoadOp | None = None) -> str | None:
    """None where `nest` is a copy that only adds or drops size-1 dims (its elements at the same addresses, in the
    same order: its load `ld`, copy_source's), else why not."""
    ld = ld or copy_source(nest)
    if ld is None:
        return "not a copy"
    src, dst = ld.source.type.get_shape(), nest.res[0].type.get_shape()
    if ld.source.type.get_element_type() != nest.res[0].type.get_element_type():
        return "the copy converts"
    if [n for n in src if n != 1] != [n for n in dst if n != 1]:
        return "the copy is not a reshape by size-1 dims"
    inner = iter(AffineExpr.dimension(d) for d, n in enumerate(dst) if n != 1)
    if any(n != 1 and e != next(inner) for e, n in zip(ld.map.data.results, src)):
        return "the copy reorders elements"
    return None


def why_not_sibling(a: loop.NestOp, b: loop.NestOp, order: BlockOrder | None = None) -> SiblingPlan | str:
    """A plan to merge two nests that read a common input over the same space, or why not."""
    if a.outs or b.outs:
        return "buffer-form nests do not fuse"
    if a.parent_block() is not b.parent_block():
        return "nests are in different blocks"
    theirs = set(b.inputs())
    shared = [v for v in a.inputs() if v in theirs]
    if not shared:
        return "no common input"
    if a.rank != b.rank:
        return "different iteration spaces"
    syms, remap = merge_symbols(a, b)
    if any(a.extents[d] != extent_in(b, d, remap) for d in range(a.rank)):
        return "different iteration spaces"
    ra, rb = set(a.reduction_dims()), set(b.reduction_dims())
    if ra and rb and ra != rb:
        return "different reduction dims"
    order = order or BlockOrder(a.parent_block())
    first, second = (a, b) if order.before(a, b) else (b, a)
    if depends_on(second, first, order=order):
        return "one nest depends on the other"
    if _reorders_effects(first, second, order):
        return "an eager call between them would move after the second, which reads it"
    if first is b:
        syms, remap = merge_symbols(b, a)
    return SiblingPlan(first, second, syms, remap, tuple(sorted(ra | rb)), shared)
