"""Common subexpression elimination whose cost grows with the program, not with its square: xDSL's CSE driver
with two of its tables changed, and the same results.

xDSL 0.74 keys an op by its name, attributes, properties, result types and operands. The operands of an
op that holds a region (a loop.nest: its symbols) say little about it, so every nest over one space lands
under one key and each lookup compares its body with all of theirs. Here such an op's key also holds its
regions' op names and the values they read from outside, which structurally equal ops share. And where
xDSL copies the table of known ops into every region it enters (once per nest, the size of the graph),
a region's table here is its own, in front of the enclosing one's.
"""

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.traits import IsolatedFromAbove
from xdsl.transforms.common_subexpression_elimination import CSEDriver, KnownOps, OperationInfo


class _Info(OperationInfo):
    """An op as a key: xDSL's, plus its regions' shape; the hash kept, as the op it stands for will not change."""

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = self._hash = (
                hash((super().__hash__(), _regions_key(self.op))) if self.op.regions else super().__hash__()
            )
        return h


def _regions_key(op: Operation) -> tuple:
    """The names of the ops inside `op`, in order, each with the operands it reads from outside `op`."""
    inside: set[Operation] = set()
    key = []
    for inner in op.walk():
        if inner is op:
            continue
        outer = tuple(v for v in inner.operands if not isinstance(v.owner, Block) and v.owner not in inside)
        key.append((inner.name, outer))
        inside.add(inner)
    return tuple(key)


class _ScopedOps(KnownOps):
    """Known ops of one region, in front of those of the regions around it (read through, never copied)."""

    def __init__(self, outer: "_ScopedOps | None" = None):
        super().__init__()
        self.outer = outer

    def get(self, k: Operation, default=None):
        info, scope = _Info(k), self
        while scope is not None:
            if (found := scope._known_ops.get(info)) is not None:
                return found
            scope = scope.outer
        return default

    def __getitem__(self, k: Operation):
        if (found := self.get(k)) is None:
            raise KeyError(k)
        return found

    def __contains__(self, k: Operation) -> bool:
        return self.get(k) is not None

    def __setitem__(self, k: Operation, v: Operation) -> None:
        self._known_ops[_Info(k)] = v

    def pop(self, k: Operation):
        return self._known_ops.pop(_Info(k))


class _Driver(CSEDriver):
    """xDSL's driver with scoped tables: `_simplify_block` and `_simplify_region` as xDSL writes them, but a
    region opens a `_ScopedOps` in front of the current table (an isolated op's regions a fresh one)."""

    def _simplify_block(self, block: Block):
        for op in block.ops:
            if op.regions:
                saved = self._known_ops
                if op.has_trait(IsolatedFromAbove, value_if_unregistered=True):
                    self._known_ops = _ScopedOps()
                for region in op.regions:
                    self._simplify_region(region)
                self._known_ops = saved
            self._simplify_operation(op)

    def _simplify_region(self, region: Region):
        if len(region.blocks) == 1:
            saved = self._known_ops
            self._known_ops = _ScopedOps(saved)
            self._simplify_block(region.block)
            self._known_ops = saved


def structural_key(op: Operation) -> tuple:
    """A hashable key two isolated ops share exactly when they are the same program up to value names: each op
    inside by name, operands (as positions in definition order), result and block argument types, properties
    and attributes (xDSL attributes hash and compare by value). Printing both and comparing the text says the
    same at several times the cost, and bufferize's kernel sharing asks it of every kernel."""
    number: dict = {}
    key = []
    for inner in op.walk():
        blocks = [b for r in inner.regions for b in r.blocks]
        for b in blocks:
            number.update((a, len(number)) for a in b.args)
        operands, results = tuple(number.get(v, -1) for v in inner.operands), tuple(r.type for r in inner.results)
        props, attrs = tuple(sorted(inner.properties.items())), tuple(sorted(inner.attributes.items()))
        args = tuple(tuple(a.type for a in b.args) for b in blocks)
        regions = tuple(len(r.blocks) for r in inner.regions)
        key.append((inner.name, operands, results, props, attrs, args, regions))
        number.update((r, len(number)) for r in inner.results)
    return tuple(key)


def cse(module: ModuleOp) -> None:
    """Replace each op by an equal one before it in scope, as xDSL's `cse` pass does."""
    _Driver(_known_ops=_ScopedOps()).simplify(module)
