"""Float sums in blocks of partial sums (targets/cpu/codegen/tuning.py CASCADE, emit.py rloops): every loop of a reduction
adds at most CASCADE steps into one partial sum, so a lane's rounding grows with the blocks, not the elements. Each
case sums values near 1 (where rounding adds up) and must stay within 1e-6 of the float64 sum, relatively; added
one after another in each lane, the column sum of 65536 rows erred 9.3e-6 (eager 1.2e-7)."""

import pytest
import torch

from .programs import build

G = torch.Generator().manual_seed(0)


def near_one(*shape):
    return torch.rand(*shape, generator=G) + 0.5


CASES = {
    "column-sum": (lambda x: x.sum(0), (65536, 64)),  # mode B: one reduction dim of 256 blocks
    "column-sum-odd": (lambda x: x.sum(0), (40009, 37)),  # a prime count of rows: a short last block
    # the next three stay within 1e-6 unblocked too (their lanes split the sums): they check the blocks' bounds and tails
    "batch-norm-statistics": (lambda x: x.sum((0, 2, 3)), (64, 8, 56, 56)),  # mode A: N and H serial, W in lanes
    "long-row": (lambda x: x.sum(-1), (2, 1 << 20)),  # mode A: the lanes loop itself in blocks
    "long-odd-row": (lambda x: x.mean(-1), (3, 70001)),  # and its masked last vector
    "nhwc-spatial-mean": (lambda x: x.permute(0, 2, 3, 1).mean((1, 2)), (2, 16, 300, 224)),  # lanes along C
}


def _relative_error(got, want) -> float:
    return ((got.double() - want) / want).abs().max().item()


@pytest.mark.parametrize("case", sorted(CASES))
def test_long_float_sums_round_like_eager(case):
    fn, shape = CASES[case]
    x = near_one(*shape)
    program, consts = build(fn, x, cache=False)
    (got,) = program([x, *consts])
    want = fn(x.double())
    assert _relative_error(got, want) <= 1e-6, (_relative_error(got, want), _relative_error(fn(x), want))


def test_a_dynamic_column_sum_is_blocked_at_run_time():
    """The blocks of a runtime extent end at the extent (the last one short), whatever it is at each call."""
    program, consts = build(lambda x: x.sum(0), near_one(700, 33), dynamic=True, cache=False)
    for rows in (1, 255, 256, 257, 50001):
        x = near_one(rows, 33)
        (got,) = program([x, *consts])
        assert _relative_error(got, x.double().sum(0)) <= 1e-6, rows
