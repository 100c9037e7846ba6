"""Where each op of a block stands, kept current through fusion, so "does a come before b" is a lookup.

Without it every order question (which of two siblings comes first, may a path run from one op to
another) walks the block, and fusion, which asks them for every candidate pair, grows with the
square of the graph. A fused nest takes the position of the op it replaces; ops that a reschedule
moves after it get exact fractional positions between it and the next op, so nothing is renumbered.
"""

from fractions import Fraction

from xdsl.ir import Block, Operation


class BlockOrder:
    def __init__(self, block: Block):
        self.block = block
        self.pos: dict[Operation, int | Fraction] = {op: i for i, op in enumerate(block.ops)}

    def before(self, a: Operation, b: Operation) -> bool:
        return self.pos[a] < self.pos[b]

    def top(self, op: Operation) -> Operation | None:
        """The op of this block that is `op` or holds it; None when `op` is outside the block."""
        while op is not None and op.parent is not self.block:
            op = op.parent_op()
        return op

    def take_place(self, new: Operation, old: Operation) -> None:
        """`new` was inserted right before `old`, which is going away."""
        self.pos[new] = self.pos[old]

    def moved_after(self, anchor: Operation, ops: list[Operation]) -> None:
        """`ops` now follow `anchor`, in this order, before whatever followed `anchor` before."""
        lo, nxt = self.pos[anchor], ops[-1].next_op
        hi = self.pos[nxt] if nxt is not None else lo + len(ops) + 1
        step = Fraction(hi - lo) / (len(ops) + 1)
        for i, op in enumerate(ops, 1):
            self.pos[op] = lo + step * i
