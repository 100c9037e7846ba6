"""fuse-loops: legality, policy and mechanics, driven to a fixpoint over each function body.

Vertical fusion runs first (each consumer takes in its producers, in load order), then sibling
fusion (nests reading a common input over one space), and again until nothing changes. Every
refusal still standing at the end is attached to the consumer as `irc.unfused`, a list of
"<producer>: <reason>" strings, so golden tests and the compile report can show why.
"""

from collections import deque
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, ShapedType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation
from xdsl.passes import ModulePass

from irc.dialects import loop

from .legality import EpiloguePlan, why_not_epilogue, why_not_retype, why_not_sibling, why_not_vertical
from .order import BlockOrder
from .policy import Policy
from .transform import fuse_epilogue, fuse_sibling, fuse_vertical, keep_wide, merge_scalars, retype_output

UNFUSED = "irc.unfused"


def producers(c: loop.NestOp) -> list[Operation]:
    seen: dict[Operation, None] = {}
    for v in c.inputs():
        if isinstance(v.owner, Operation):
            seen.setdefault(v.owner, None)
    return list(seen)


def _alive(op: Operation) -> bool:
    return op.parent is not None


class Fuser:
    """Fusion to a fixpoint that re-checks only what a fusion may have changed.

    A consumer's checks read its producers, their other users (and whether those feed the consumer), and
    nothing else. So after a fusion only these are checked again ("dirty"): the new nest, its consumers,
    the consumers of every nest the fused ones read (their users changed), and the consumers refused
    a producer they would keep (a refusal that a new path through the fused nest can change). A
    consumer checked and refused stays refused until one of these marks it; the fusions taken, their
    order and the reasons recorded are those of checking every consumer every time."""

    def __init__(self, block: Block, policy: Policy, sibling: bool):
        self.block, self.policy, self.sibling = block, policy, sibling
        self.refused: dict[tuple[str, Operation, Operation], str] = {}
        self.order = BlockOrder(block)
        self.members = {op for op in block.ops if isinstance(op, loop.NestOp) and not op.outs}  # the nests to fuse
        self.inputs: dict[Operation, list] = {}  # a nest's inputs, until a fusion changes what it loads
        self.dirty: set[Operation] = set(self.members)
        self.keeps: set[Operation] = set()  # consumers with a refused producer they would keep
        self.settled: dict[tuple[Operation, Operation], str] = {}  # sibling pairs refused for good

    def nests(self) -> list[loop.NestOp]:
        return [op for op in self.block.ops if op in self.members]

    def inputs_of(self, n: loop.NestOp) -> list:
        if n not in self.inputs:
            self.inputs[n] = n.inputs()
        return self.inputs[n]

    def producers(self, c: loop.NestOp) -> list[Operation]:
        """The ops whose results c loads (never c itself: only malformed IR, which irc-opt takes, reads its own)."""
        return list(
            dict.fromkeys(v.owner for v in self.inputs_of(c) if isinstance(v.owner, Operation) and v.owner is not c)
        )

    def run(self) -> None:
        for n in self.nests():
            n.attributes.pop(UNFUSED, None)
        self.scalars_first()
        self.scalar_runs()
        while self.vertical() | (self.sibling and self.siblings()):
            pass
        self.annotate()

    def scalars_first(self) -> None:
        """Scalar bookkeeping first, in one pass: the 0-d nests that read only arguments and each other become one
        nest per max_body_ops of body. The fixpoint would reach much the same nest, one fusion at a time, rebuilding
        a nest that gains results at each step: an optimizer's step counts and bias corrections for n parameters
        cost it n^2 (AdamW over 16 parameters: 453 fusions of a nest growing to 200 results)."""
        groups: list[list[loop.NestOp]] = [[]]
        size, taken = 0, set()
        for n in self.nests():
            if (
                n.rank
                or n.symbols
                or not all(isinstance(v, BlockArgument) or v.owner in taken for v in self.inputs_of(n))
            ):
                continue
            body = len(n.body.block.ops)
            if size + body > self.policy.max_body_ops:
                groups.append([])
                size = 0
            groups[-1].append(n)
            taken.add(n)
            size += body
        for group in groups:
            if len(group) > 1:
                self.merge(group)

    def merge(self, group: list[loop.NestOp]) -> None:
        """merge_scalars(group), and what it changes for the fixpoint."""
        fused = merge_scalars(group, self.order)
        self.members -= set(group)
        self.dirty -= set(group)
        for n in group:
            self.inputs.pop(n, None)
        if fused is None:  # nothing read them
            return
        self.members.add(fused)
        self.dirty.add(fused)
        for r in self.consumers(fused):
            self.inputs.pop(r, None)

    def scalar_runs(self) -> None:
        """Then, in one pass too, each run of 0-d nests that reads whole reductions' results (values of one element
        made before the run began) and the run's own nests becomes one nest: dynamic int8 quantization's
        choose_qparams is ~20 such scalar ops between its reductions and its quantize, which the fixpoint fused one
        at a time (BERT-base: thousands of fusions). A nest that reads nothing stays as it is, so that every reader
        takes in its own copy of a constant."""
        runs: list[list[loop.NestOp]] = [[]]
        size = 0

        def ready(v, first: Operation, run: list) -> bool:
            if v.owner in run:
                return True
            one = isinstance(v.type, ShapedType) and all(n == 1 for n in v.type.get_shape())
            return (
                one
                and isinstance(v.owner, Operation)
                and v.owner.parent is self.block
                and self.order.before(v.owner, first)
            )

        for n in self.nests():
            ins = self.inputs_of(n)
            if n.rank or n.symbols or all(isinstance(v, BlockArgument) for v in ins):
                continue
            run = runs[-1]
            if (
                not run
                or not all(ready(v, run[0], run) for v in ins)
                or size + len(n.body.block.ops) > self.policy.max_body_ops
            ):
                if not all(ready(v, n, ()) for v in ins):
                    continue
                runs.append(run := [])
                size = 0
            run.append(n)
            size += len(n.body.block.ops)
        for run in runs:
            if len(run) > 1:
                self.merge(run)

    def consumers(self, op: Operation) -> set[Operation]:
        return {t for r in op.results for u in r.uses if (t := self.order.top(u.operation)) in self.members}

    def fuse(self, fused: tuple[Operation, Operation], transform, *args) -> loop.NestOp:
        """transform(*args) fusing the two ops `fused`; marks what that may change for other consumers."""
        touched = {q for op in fused for q in (op, *self.producers(op)) if q in self.members}
        new = transform(*args, self.order)
        self.members.add(new)
        self.members -= {op for op in fused if not _alive(op)}
        readers = self.consumers(new)  # they load its results now
        for r in readers:
            self.inputs.pop(r, None)
        self.dirty |= {new} | readers | self.keeps
        for q in touched:
            if _alive(q):
                self.dirty |= self.consumers(q)
        return new

    def vertical(self) -> bool:
        changed = False
        work = deque(self.nests())
        while work:
            c = work.popleft()
            if not _alive(c) or c not in self.dirty:
                continue
            self.dirty.discard(c)
            self.keeps.discard(c)
            for p in self.producers(c):
                k = why_not_retype(p, c)
                if isinstance(k, int):
                    work.appendleft(self.fuse((p, c), retype_output, p, c, k))
                    changed = True
                    break
                plan = why_not_vertical(p, c, self.order)
                reason = plan if isinstance(plan, str) else self.policy.vertical(plan)
                if reason is not None and isinstance(epi := why_not_epilogue(p, c, self.order), EpiloguePlan):
                    work.appendleft(self.fuse((p, c), fuse_epilogue, epi))
                    changed = True
                    break
                if reason is not None:
                    self.refused[("producer", p, c)] = reason
                    if not isinstance(plan, str) and plan.keep:
                        self.keeps.add(c)
                    continue
                work.appendleft(self.fuse((p, c), fuse_vertical, plan))
                changed = True
                break
        return changed

    def siblings(self) -> bool:
        """Every sibling fusion the current nests allow, each pair checked against the block as it is then (a nest
        a fusion made waits for the next round). One fusion per round re-checked every kept refusal once per
        fusion, which on a large backward meant many rounds and thousands of legality checks."""
        by_input: dict = {}
        for n in self.nests():
            for v in self.inputs_of(n):
                by_input.setdefault(v, []).append(n)
        changed = False
        for group in by_input.values():
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    if not (_alive(a) and _alive(b)):
                        continue
                    reason = self.settled.get((a, b))
                    if reason is None:
                        plan = why_not_sibling(a, b, self.order)
                        if isinstance(plan, str):  # structural, or a path between them: no fusion changes that
                            reason = self.settled[(a, b)] = plan
                        else:
                            reason = self.policy.sibling(plan)
                    if reason is not None:
                        if reason not in ("different iteration spaces", "no common input"):
                            self.refused[("sibling", a, b)] = reason
                        continue
                    self.fuse((a, b), fuse_sibling, plan)
                    changed = True
        return changed

    def annotate(self) -> None:
        position = {op: i for i, op in enumerate(self.block.ops)}
        notes: dict[Operation, list[str]] = {}
        for (kind, p, c), reason in self.refused.items():
            if not (_alive(p) and _alive(c)) or p.parent_block() is not self.block:
                continue
            if kind == "producer" and p not in producers(c):
                continue
            label = f"{p.name}@{position[p]}"
            notes.setdefault(c, []).append(f"{kind} {label}: {reason}")
        for c, texts in notes.items():
            c.attributes[UNFUSED] = ArrayAttr([StringAttr(t) for t in sorted(set(texts))])


def fuse_block(block: Block, policy: Policy = Policy(), sibling: bool = True) -> None:
    Fuser(block, policy, sibling).run()


@dataclass(frozen=True)
class FuseLoopsPass(ModulePass):
    """Fuse loop.nest ops: vertical (pointwise chains, prologues into reductions, reduction epilogues) and sibling."""

    name = "fuse-loops"
    max_body_ops: int = 400
    max_recompute_cost: int = 24
    max_reduction_depth: int = 4
    sibling: bool = True

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        policy = Policy(self.max_body_ops, self.max_recompute_cost, self.max_reduction_depth)
        for f in module.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                fuse_block(f.body.block, policy, self.sibling)
                keep_wide(f)


def refusals(module: ModuleOp) -> list[str]:
    """Every standing fusion refusal in the module, as "<consumer>: <producer>: <reason>"."""
    out = []
    for op in module.walk():
        if UNFUSED in op.attributes:
            out += [f"{op.name}: {s.data}" for s in op.attributes[UNFUSED].data]
    return out
