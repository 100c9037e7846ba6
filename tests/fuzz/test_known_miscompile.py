"""The fuzzer finds bugs: break fusion's index map on purpose and the per-pass property fails, shrunk to a tiny program.

The test-only option IRC_TEST_MISCOMPILE=fusion-index (lowering/fusion/legality.py) reads a producer
transposed wherever a fused consumer loads it: the last two index expressions of every fusion site are
swapped, as an index-map bug would.
"""

import pytest
from hypothesis import Phase, given, reject

from irc.lowering.fusion import legality
from irc.tools.fuzz.profiles import profile
from irc.tools.fuzz.properties import FuzzFailure, Inconclusive, check_program
from irc.tools.fuzz.strategies import programs


def test_a_broken_fusion_index_map_is_found_and_shrunk(monkeypatch):
    monkeypatch.setenv(legality.TEST_MISCOMPILE, "fusion-index")

    @profile(max_examples=60, phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False)
    @given(programs(max_ops=4))
    def prop(p):
        try:
            check_program(p, only=["reference"])  # the reference target does not fuse: the per-pass check must see it
        except Inconclusive:
            reject()

    with pytest.raises(FuzzFailure) as info:
        prop()
    f = info.value
    assert f.kind in ("pass-mismatch", "pass-crash"), f.report()
    assert "fuse-loops" in f.message, f.report()
    assert len(f.program.ops) <= 3, f.report()
    report = f.report()
    assert "def fn(" in report and "def make_inputs(" in report and "loop.nest" in report
    print(report)


def test_a_mismatch_names_the_first_stage_that_differs(monkeypatch):
    """An importer that translates sub as add: the target property fails and localizes it to the tensor stage."""
    import torch

    from irc.frontend.aten_table import IMPORTERS, load_all
    from irc.tools.fuzz.programs import Input, Op, Program

    load_all()
    monkeypatch.setitem(IMPORTERS, torch.ops.aten.sub.Tensor, IMPORTERS[torch.ops.aten.add.Tensor])
    p = Program((Input((3, 2), seed=0), Input((2,), seed=1)), (Op("sub", (0, 1), "torch.sub({0}, {1})"),), (2,))
    with pytest.raises(FuzzFailure) as info:
        check_program(p, only=["reference"])
    f = info.value
    assert f.kind == "mismatch" and f.stage.startswith("tensor (graph0-inference): result 0"), f.report()
    assert "tn.add" in f.mlir and "def fn(a0, a1):" in f.report()
