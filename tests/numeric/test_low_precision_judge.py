"""The low-precision judge itself (tests/numeric/low_precision.py), on hand-made results, no compiling: it passes
eager's own result and an equally accurate one with other bits, and fails the errors irc could make in bf16 and
f16 (accumulating in the narrow type, an overflow eager does not have, a nan, a wrong index, a wrong dtype)."""

import pytest
import torch

from tests.numeric.low_precision import (
    FACTOR,
    REL_SPAN,
    LowPrecisionMismatch,
    assert_low_precision_close,
    default_floor,
    judge_tensor,
)

DTYPES = pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])


def _inputs(dtype, *shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@DTYPES
def test_eager_passes_itself_and_a_float32_result_rounded_once_passes(dtype):
    a, b = _inputs(dtype, 32, 256), _inputs(dtype, 256, 16, seed=1)
    ref = a.double() @ b.double()
    eager = a @ b
    once = (a.float() @ b.float()).to(dtype)  # other summation order, one rounding: other bits, same accuracy
    assert_low_precision_close(eager, eager, ref, dtype)
    assert_low_precision_close(once, eager, ref, dtype)


@DTYPES
def test_accumulating_in_the_narrow_type_fails(dtype):
    """A sum of 4096 values accumulated in bf16/f16 (eager accumulates in float32) loses most of its bits."""
    x = _inputs(dtype, 8, 4096).abs()
    ref, eager = x.double().sum(1), x.sum(1)
    narrow = torch.zeros(8, dtype=dtype)
    for i in range(x.shape[1]):
        narrow = narrow + x[:, i]
    with pytest.raises(LowPrecisionMismatch, match="max error"):
        assert_low_precision_close(narrow, eager, ref, dtype)


def test_where_eager_is_exact_one_ulp_passes_and_two_fail():
    """The floor: one bf16 ulp, at the output's largest value (rule 1) and at each value (rule 2), admits a
    faithful rounding, not more."""
    ref = torch.tensor([1.0, 0.5, -0.25], dtype=torch.float64)
    eager = ref.to(torch.bfloat16)
    ulp = torch.finfo(torch.bfloat16).eps
    assert default_floor(ref, torch.bfloat16) == ulp
    assert judge_tensor(eager + torch.tensor([ulp, ulp / 2, -ulp / 4], dtype=torch.bfloat16), eager, ref) is None
    assert "max error" in judge_tensor(eager + torch.tensor([2 * ulp, 0, 0], dtype=torch.bfloat16), eager, ref)
    # one ulp of the largest value is two ulps of 0.5: rule 2 fails it
    assert "ulps of each value" in judge_tensor(eager + torch.tensor([0, ulp, 0], dtype=torch.bfloat16), eager, ref)


def test_an_extra_rounding_of_an_intermediate_fails_where_values_cancel():
    """x + v * a / b with the quotient, the product and v itself rounded to bf16 (eager rounds once): the largest
    values' errors stay within 1.5x eager's, but where the sum nearly cancels irc is several ulps off; rule 2
    sees it. Values 256x below the largest are judged in ulps at that scale (REL_SPAN)."""
    g = torch.Generator().manual_seed(0)
    x, a, b = (torch.randn(*s, generator=g).mul(8).bfloat16() for s in ((64, 64), (64, 1), (1, 64)))
    ref = x.double() + 3.14 * a.double() / b.double()
    eager = torch.addcdiv(x, a, b, value=3.14)

    def bf(t):
        return t.bfloat16().float()

    rounded = (x.float() + bf(bf(torch.tensor(3.14)) * bf(a.float() / b.float()))).bfloat16()
    assert (rounded.double() - ref).abs().max() <= FACTOR * (eager.double() - ref).abs().max()  # rule 1 passes it
    assert "ulps of each value" in judge_tensor(rounded, eager, ref)
    once = (x.float() + 3.14 * a.float() / b.float()).bfloat16()
    assert judge_tensor(once, eager, ref) is None
    near_zero = ref.abs() < REL_SPAN * ref.abs().max()
    assert near_zero.any()  # some values are judged at the near-zero scale, not in their own tiny ulps


def test_non_finite_values():
    """Where eager overflows, irc may too or may be closer; a nan or infinity where eager is finite fails."""
    ref = torch.tensor([70000.0, 1.0, 2.0], dtype=torch.float64)
    eager = ref.to(torch.float16)  # inf, 1, 2
    assert torch.isinf(eager[0])
    assert judge_tensor(eager.clone(), eager, ref) is None
    assert judge_tensor(torch.tensor([float("nan"), 1.0, 2.0], dtype=torch.float16), eager, ref) is not None
    assert judge_tensor(torch.tensor([float("inf"), float("nan"), 2.0], dtype=torch.float16), eager, ref) is not None
    assert judge_tensor(torch.tensor([float("inf"), 1.0, float("inf")], dtype=torch.float16), eager, ref) is not None
    # one element eager overflows and irc does not (soft_margin_loss in f16): irc is judged by the floor
    ref1 = torch.tensor(7.640625123, dtype=torch.float64)
    eager1 = torch.tensor(float("inf"), dtype=torch.float16)
    assert judge_tensor(ref1.to(torch.float16), eager1, ref1) is None
    assert judge_tensor(torch.tensor(7.66, dtype=torch.float16), eager1, ref1) is not None


def test_indices_dtype_and_shape():
    ref = torch.tensor([3, 1, 2])
    assert judge_tensor(ref.clone(), ref, ref) is None
    assert "differ" in judge_tensor(torch.tensor([3, 1, 0]), ref, ref)
    x = torch.ones(4, dtype=torch.bfloat16)
    assert "dtype" in judge_tensor(x.float(), x, x.double())
    assert "shape" in judge_tensor(x[:3], x, x.double())
    with pytest.raises(LowPrecisionMismatch, match=r"out\[1\]"):
        assert_low_precision_close((x, x + 1), (x, x), (x.double(), x.double()), where="out")
