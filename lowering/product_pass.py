"""The skeleton of a pass that rewrites the matrix products a target's rule picks (fold-bias, orient-products)."""

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn


@dataclass(frozen=True)
class ProductPass(ModulePass):
    """Calls `rewrite(mm, picks)` on each loop-stage tn.mm. `picks` is the target's rule (rules.Rules); without
    one the pass changes nothing, unless `every=true` (irc-opt's way to see the rewrite on a module that names
    no target: the rule itself is no pass option)."""

    every: bool = False
    picks: Callable[[Operation], bool] | None = field(default=None, compare=False, repr=False)

    @abstractmethod
    def rewrite(self, mm: tn.MmOp, picks: Callable[[Operation], bool]) -> None:
        """Rewrite `mm` where `picks(mm)` and the pass's own conditions hold."""

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        picks = (lambda op: True) if self.every else self.picks
        if picks is None:
            return
        for mm in [op for op in module.walk() if isinstance(op, tn.MmOp)]:
            self.rewrite(mm, picks)


__all__ = ["ProductPass"]
