"""Everything that rewrites IR. PASSES is the single registry of pass names."""

from .pipeline import STAGE_ORDER, STAGES

PASSES = {p.name: p for passes in STAGES.values() for p in passes}

__all__ = ["PASSES", "STAGES", "STAGE_ORDER"]
