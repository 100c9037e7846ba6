"""Rewrite rules as small functions: `@rule(Op)` turns `fn(op) -> replacement | None` into an xDSL pattern."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

Replacement = SSAValue | Operation | Sequence[Operation] | None


@dataclass(frozen=True)
class Rule(RewritePattern):
    root: type[Operation]
    fn: Callable[[Operation], Replacement]

    @property
    def name(self) -> str:
        return self.fn.__name__

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.root) or (out := self.fn(op)) is None:
            return
        if isinstance(out, SSAValue):
            rewriter.replace(op, (), (out,))
        else:
            rewriter.replace(op, out if isinstance(out, Operation) else list(out))


def rule(root: type[Operation]) -> Callable[[Callable[[Operation], Replacement]], Rule]:
    """Decorator: `@rule(tn.NegOp)` over `def fold_neg_neg(op): ...`."""
    return lambda fn: Rule(root, fn)


def apply_rules(module: ModuleOp, rules: Iterable[RewritePattern]) -> bool:
    """Apply rules greedily to a fixpoint; True when anything changed."""
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(list(rules)))
    return walker.rewrite_module(module)
