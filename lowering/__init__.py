"""Everything that rewrites IR. PASSES is the single registry of pass names; pipeline.run the one driver."""

from .pipeline import FREEZE, LOOP, MEM, OPTIONAL, REFREEZE, STAGE_ORDER, STAGES, TENSOR_OPT, Lowered, Plan, run
from .simplify_loop import SimplifyLoopPass

PASSES = {p.name: p for passes in (*STAGES.values(), FREEZE, REFREEZE, OPTIONAL) for p in passes}

__all__ = ["PASSES", "STAGES", "STAGE_ORDER", "TENSOR_OPT", "LOOP", "MEM", "Lowered", "Plan", "run", "SimplifyLoopPass"]
