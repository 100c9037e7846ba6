"""plan-buffers: the intermediates' placeholder allocations become slots of one arena, planned by liveness.

Steps are the launches and externs of @main in order. An intermediate lives from the step that
writes it to the last step that reads it (directly or through a view). A kernel without
reduction dims whose input dies at that kernel, read only at the very index it writes, may
write its output over that input (in place, as eager's `relu_` would); of a kernel's several outputs, at
most one takes the place of any one input. Such an input may also be a library's fresh result (a
convolution's, which torch allocates): the relu after it then rewrites the lines the library has just
written, where a slot of its own read them and wrote as many to memory the call had not touched, far off
the copy bound. Buffers are then placed
greedily, largest first, at the lowest 64-byte-aligned offset free for their whole lifetime.
Intermediates of symbolic size keep their own allocation.
"""

import re
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass

from irc.dialects import loop, memory
from irc.dialects import tensor as tn

from .bufferize import INTERMEDIATE

ALIGN = 64


@dataclass
class Plan:
    arena_bytes: int = 0
    intermediate_bytes: int = 0  # the sum of every intermediate's size (what no reuse would take)
    buffers: int = 0
    in_place: int = 0
    dynamic: int = 0  # intermediates of symbolic size, allocated on their own
    offsets: dict[SSAValue, int] = field(default_factory=dict)


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def kernels_by_name(module: ModuleOp) -> dict[str, loop.NestOp]:
    """Each kernel function's nest, by the function's name (looked up once per launch: no scan of the module each)."""
    out = {}
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            nest = next((o for o in op.body.block.ops if isinstance(o, loop.NestOp)), None)
            if nest is not None:
                out[op.sym_name.data] = nest
    return out


def reads_in_place(nest: loop.NestOp, arg: SSAValue, out_shape) -> bool:
    """Every load of `arg` reads the element at the point itself, in a space that is the output's."""
    if nest.reduction_dims() or list(out_shape) != [e.value if hasattr(e, "value") else -1 for e in nest.extents]:
        return False
    for use in arg.uses:
        ld = use.operation
        if not isinstance(ld, loop.LoadOp) or ld.indices:
            return False
        res = ld.map.data.results
        if len(res) != nest.rank or any(
            not (isinstance(e, AffineDimExpr) and e.position == d) for d, e in enumerate(res)
        ):
            return False
    return True


def plan_function(f: func.FuncOp, kernels: dict[str, loop.NestOp]) -> Plan:
    block = f.body.block
    steps = [op for op in block.ops if isinstance(op, memory.LaunchOp | memory.ExternOp)]
    placeholders = [op for op in block.ops if isinstance(op, memory.AllocOp) and INTERMEDIATE in op.attributes]
    plan = Plan()
    placeholders = _over_library_results(block, steps, placeholders, kernels, plan)
    static = [a for a in placeholders if memory.nbytes_of(a.result.type) is not None]
    plan.dynamic = len(placeholders) - len(static)
    for a in placeholders:
        a.attributes.pop(INTERMEDIATE)
    if not static:
        if plan.in_place:
            _state(f, plan)
        return plan
    index = {op: i for i, op in enumerate(steps)}
    first: dict[SSAValue, int] = {}
    last: dict[SSAValue, int] = {}

    def touch(buf: SSAValue, step: int, write: bool) -> None:
        if write:
            first.setdefault(buf, step)
        last[buf] = max(last.get(buf, step), step)

    def root(v: SSAValue) -> SSAValue:
        while isinstance(v.owner, memory.ViewOp | memory.ReshapeOp):
            v = v.owner.source
        return v

    for step in steps:
        i = index[step]
        for v in step.ins:
            touch(root(v), i, False)
        for v in step.outs:
            touch(root(v), i, True)
    group = {a.result: a.result for a in static}

    def find(v):
        while group[v] is not v:
            v = group[v]
        return v

    for step in steps:
        if not isinstance(step, memory.LaunchOp):
            continue
        nest = kernels[step.callee.root_reference.data]
        kargs = nest.parent_block().args
        for k, out in enumerate(step.outs):
            if out not in group:
                continue
            # The outputs of one launch are written at the same point: two of them over one input would clobber each other.
            others = {find(o) for o in step.outs if o is not out and o in group}
            for j, inp in enumerate(step.ins):
                if (
                    inp in group
                    and inp is not out
                    and last.get(inp) == index[step]
                    and find(inp) is not find(out)
                    and find(inp) not in others
                    and inp.type == out.type
                    and not _viewed(inp)
                    and reads_in_place(nest, kargs[j], out.type.get_shape())
                ):
                    group[find(out)] = find(inp)
                    plan.in_place += 1
                    break
    live: dict[SSAValue, tuple[int, int, int]] = {}
    for a in static:
        g = find(a.result)
        lo, hi, size = live.get(g, (1 << 60, -1, 0))
        live[g] = (
            min(lo, first.get(a.result, 0)),
            max(hi, last.get(a.result, 0)),
            max(size, _align(memory.nbytes_of(a.result.type))),
        )
        plan.intermediate_bytes += memory.nbytes_of(a.result.type)
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, lo, hi)
    offsets: dict[SSAValue, int] = {}
    for g, (lo, hi, size) in sorted(live.items(), key=lambda kv: (-kv[1][2], kv[1][0])):
        busy = sorted((o, s) for o, s, l2, h2 in placed if l2 <= hi and lo <= h2)
        offset = 0
        for o, s in busy:
            if offset + size <= o:
                break
            offset = max(offset, o + s)
        placed.append((offset, size, lo, hi))
        offsets[g] = offset
    plan.arena_bytes = max(o + s for o, s, _, _ in placed)
    plan.buffers += len(static)
    arena = memory.ArenaOp(plan.arena_bytes)
    block.insert_op_before(arena, block.first_op)
    for a in static:
        slot = memory.SlotOp(arena.result, offsets[find(a.result)], a.result.type)
        plan.offsets[slot.result] = offsets[find(a.result)]
        block.insert_op_before(slot, a)
        a.result.replace_all_uses_with(slot.result)
        a.detach()
        a.erase()
    _state(f, plan)
    return plan


def _state(f: func.FuncOp, plan: Plan) -> None:
    f.attributes["irc.plan"] = StringAttr(
        f"arena {plan.arena_bytes} bytes for {plan.buffers} intermediates of {plan.intermediate_bytes} bytes, {plan.in_place} in place"
        + (f", {plan.dynamic} of symbolic size" if plan.dynamic else "")
    )


FRESH = (tn.MmOp, tn.AddmmOp, tn.BmmOp, tn.ConvolutionOp, tn.ScaledDotProductAttentionOp)
"""Region ops whose library call answers a fresh tensor, never an alias of an operand (a reshape may be a view)."""


def _over_library_results(block, steps, placeholders, kernels, plan: Plan) -> list:
    """Launches that write their output over a library's fresh result dying at them (the placeholder goes); the
    placeholders left."""
    where = {op: i for i, op in enumerate(block.ops)}
    index = {op: i for i, op in enumerate(steps)}
    mine = {a.result: a for a in placeholders}
    for step in steps:
        if not isinstance(step, memory.LaunchOp):
            continue
        nest = kernels[step.callee.root_reference.data]
        kargs, taken = nest.parent_block().args, set()
        for out in step.outs:
            if out not in mine:
                continue
            for j, inp in enumerate(step.ins):
                ext = inp.owner
                if inp in taken or not (isinstance(ext, memory.ExternOp) and _fresh(ext)) or inp.type != out.type:
                    continue
                shape = out.type.get_shape()
                if (
                    all(index.get(u.operation, 1 << 60) <= index[step] for u in inp.uses)
                    and all(where[u.operation] > where[ext] for u in out.uses)
                    and all(reads_in_place(nest, kargs[k], shape) for k, v in enumerate(step.ins) if v is inp)
                ):
                    alloc = mine.pop(out)
                    plan.buffers += 1
                    plan.intermediate_bytes += memory.nbytes_of(out.type) or 0
                    out.replace_all_uses_with(inp)
                    alloc.detach()
                    alloc.erase()
                    taken.add(inp)
                    plan.in_place += 1
                    break
    return list(mine.values())


def _fresh(ext: memory.ExternOp) -> bool:
    ops = list(ext.body.block.ops)
    return len(ops) == 2 and isinstance(ops[0], FRESH)


def _viewed(v: SSAValue) -> bool:
    return any(isinstance(u.operation, memory.ViewOp | memory.ReshapeOp) for u in v.uses)


def plan_module(module: ModuleOp) -> Plan:
    """Plan every function that allocates intermediates (the graph's; kernels allocate nothing)."""
    total, kernels = Plan(), kernels_by_name(module)
    for f in list(module.body.block.ops):
        if (
            isinstance(f, func.FuncOp)
            and f.body.blocks
            and any(INTERMEDIATE in op.attributes for op in f.body.block.ops)
        ):
            p = plan_function(f, kernels)
            total.arena_bytes += p.arena_bytes
            total.intermediate_bytes += p.intermediate_bytes
            total.buffers += p.buffers
            total.in_place += p.in_place
            total.dynamic += p.dynamic
    return total


_STATED = re.compile(r"arena (\d+) bytes for \d+ intermediates of (\d+) bytes, (\d+) in place")


def plan_summary(module: ModuleOp) -> tuple[int, int, int]:
    """(arena bytes, intermediate bytes, buffers in place) over the plans the functions of `module` state."""
    total = [0, 0, 0]
    for f in module.body.block.ops:
        if isinstance(f, func.FuncOp) and isinstance(stated := f.attributes.get("irc.plan"), StringAttr):
            if m := _STATED.match(stated.data):
                total = [t + int(v) for t, v in zip(total, m.groups())]
    return total[0], total[1], total[2]


@dataclass(frozen=True)
class PlanBuffersPass(ModulePass):
    """Intermediates into one arena: liveness intervals, in-place reuse, greedy offsets; @main states the plan."""

    name = "plan-buffers"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        plan_module(module)


__all__ = ["Plan", "PlanBuffersPass", "plan_module", "plan_summary"]
