"""fuse-loops re-checks only the consumers a fusion may have changed (issue 16: compile time linear in the graph):
the result must be the one of checking every consumer after every fusion, and the positions it keeps must
follow the block."""

import pytest
from xdsl.dialects import func

from irc.bench.compile_scaling import capture
from irc.dialects import ALL_DIALECTS
from irc.frontend.fx_import import import_graph
from irc.ir import make_context, parse_module, print_module, run_passes
from irc.lowering import pipeline
from irc.lowering.fusion.fuse import UNFUSED, Fuser
from irc.lowering.fusion.policy import Policy
from irc.lowering.simplify_loop import SimplifyLoopPass
from irc.lowering.tensor_to_loop import TensorToLoopPass


class CheckingEverything(Fuser):
    """The fixpoint without shortcuts: every consumer and sibling pair is checked again after every fusion."""

    def fuse(self, fused, transform, *args):
        new = super().fuse(fused, transform, *args)
        self.dirty |= self.members
        self.settled.clear()
        return new


def loop_stage(case: str, n: int) -> list[str]:
    """The case's graphs just before fuse-loops."""
    texts = []
    for _, gm in capture(case, n):
        m = import_graph(gm).module
        pipeline.run(m, stop="tensor-opt")
        run_passes(make_context(ALL_DIALECTS), m, (TensorToLoopPass(), SimplifyLoopPass()))
        texts.append(print_module(m))
    return texts


def fused(text: str, fuser: type[Fuser]):
    m = parse_module(make_context(ALL_DIALECTS), text)
    main = next(op for op in m.walk() if isinstance(op, func.FuncOp))
    f = fuser(main.body.block, Policy(), sibling=True)
    f.run()
    m.verify()
    return m, f


@pytest.mark.parametrize("case", ["transformer-train", "conv-train"])
def test_the_same_fusions_and_refusals_as_checking_everything(case):
    for text in loop_stage(case, 2):
        ours, fuser = fused(text, Fuser)
        theirs, _ = fused(text, CheckingEverything)
        assert print_module(ours) == print_module(theirs)
        assert print_module(ours) != text and UNFUSED in print_module(ours)  # it fused, and refused some
        positions = [fuser.order.pos[op] for op in fuser.block.ops]
        assert positions == sorted(positions) and len(set(positions)) == len(positions)
