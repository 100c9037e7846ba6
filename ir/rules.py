"""Rewrite rules as small functions: `@rule(Op)` turns `fn(op) -> replacement | None` into an xDSL pattern.

Match counting is opt-in and costs nothing when off: inside `with count_matches() as counts:`
every Rule that fires adds one to `counts[rule name]`, and every other xDSL RewritePattern that a
PatternRewriteWalker applies adds one to `counts["PatternClass(op.name)"]` (the op it rewrote).
"""

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)


@dataclass(frozen=True)
class Replace:
    """A replacement whose values are not the last op's results (an op with several results)."""

    ops: Sequence[Operation]
    values: Sequence[SSAValue]


Replacement = SSAValue | Operation | Sequence[Operation] | Replace | None

_COUNTERS: list[Counter] = []  # the active count_matches() counters, innermost last


@dataclass(frozen=True)
class Rule(RewritePattern):
    root: type[Operation] | tuple[type[Operation], ...]
    fn: Callable[[Operation], Replacement]

    @property
    def name(self) -> str:
        return self.fn.__name__

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.root) or (out := self.fn(op)) is None:
            return
        if _COUNTERS:
            _COUNTERS[-1][self.name] += 1
        if isinstance(out, SSAValue):
            rewriter.replace(op, (), (out,))
        elif isinstance(out, Replace):
            rewriter.replace(op, list(out.ops), list(out.values))
        else:
            rewriter.replace(op, out if isinstance(out, Operation) else list(out))


def rule(root: type[Operation] | tuple[type[Operation], ...]) -> Callable[[Callable[[Operation], Replacement]], Rule]:
    """Decorator: `@rule(tn.NegOp)` over `def fold_neg_neg(op): ...` (a tuple of op classes: any of them)."""
    return lambda fn: Rule(root, fn)


class _ByType(RewritePattern):
    """Patterns in order until one rewrites, trying on an op only the Rules whose root it is (and every other
    pattern): asking each Rule's isinstance of every op grows as rules times ops, large on a big backward."""

    def __init__(self, patterns: Sequence[RewritePattern]):
        self.patterns = list(patterns)
        self._for: dict[type, list[RewritePattern]] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (todo := self._for.get(type(op))) is None:
            todo = self._for[type(op)] = [p for p in self.patterns if not isinstance(p, Rule) or isinstance(op, p.root)]
        for pattern in todo:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def apply_rules(module: ModuleOp, rules: Iterable[RewritePattern]) -> bool:
    """Apply rules greedily to a fixpoint; True when anything changed."""
    walker = PatternRewriteWalker(GreedyRewritePatternApplier([_ByType(list(rules))]))
    return walker.rewrite_module(module)


@dataclass(frozen=True)
class _Counted(RewritePattern):
    """An xDSL pattern that counts its own rewrites (Rules count themselves)."""

    pattern: RewritePattern
    counts: Counter

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        name = op.name  # read before the pattern replaces the op
        self.pattern.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action:
            self.counts[f"{type(self.pattern).__name__}({name})"] += 1


def _counting(pattern: RewritePattern, counts: Counter) -> RewritePattern:
    if isinstance(pattern, GreedyRewritePatternApplier):
        patterns = [_counting(p, counts) for p in pattern.rewrite_patterns]
        return GreedyRewritePatternApplier(
            patterns, ctx=pattern.ctx, folding_enabled=pattern.folding_enabled, dce_enabled=pattern.dce_enabled
        )
    if isinstance(pattern, _ByType):
        return _ByType([_counting(p, counts) for p in pattern.patterns])
    return pattern if isinstance(pattern, (Rule, _Counted)) else _Counted(pattern, counts)


@contextmanager
def count_matches() -> Iterator[Counter]:
    """Count the rewrites of every rule and pattern applied inside the block (for `irc-opt --statistics`)."""
    counts: Counter = Counter()
    original = PatternRewriteWalker.rewrite_region

    def rewrite_region(walker: PatternRewriteWalker, region):
        pattern = walker.pattern
        walker.pattern = _counting(pattern, counts)
        try:
            return original(walker, region)
        finally:
            walker.pattern = pattern

    _COUNTERS.append(counts)
    PatternRewriteWalker.rewrite_region = rewrite_region
    try:
        yield counts
    finally:
        PatternRewriteWalker.rewrite_region = original
        _COUNTERS.pop()
