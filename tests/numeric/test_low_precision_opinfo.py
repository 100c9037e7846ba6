"""torch's op_db CPU samples in bfloat16 and float16 through irc, each output (and each input the op writes)
judged against the op run in float64 on the same tensors upcast exactly: irc's error at most 1.5x eager's own
narrow-dtype error plus one ulp at the output's scale (tests/numeric/low_precision.py; the runner is
low_precision_opinfo.py). Eager's bits are not the goal.

CI runs a fixed subset: the ops a model's forward and backward are made of (CI_KEYS: products, convolution,
the norms, softmax, activations, reductions, the loss, attention, embedding, a few elementwise ops), CI_SAMPLES
sample each (the largest of the first CI_LARGEST_OF), in both dtypes: every op in every sample would take far
more than this file's share of the suite's time. The whole sweep (every entry, FULL_SAMPLES samples) is
`IRC_OPINFO_FULL=1 pytest -m slow tests/numeric/test_low_precision_opinfo.py` or, in parallel and printing how
close each entry came to its bound, `python -m tests.numeric.low_precision_opinfo`.
"""

import pytest
import torch

from irc import env
from tests.numeric.low_precision_opinfo import DTYPES, run_entry
from tests.opinfo.harness import RANDOM
from tests.opinfo.sweep import ops_by_key

OPS = ops_by_key()
FULL = env.get("IRC_OPINFO_FULL")
CI_SAMPLES, CI_BUDGET_S, CI_LARGEST_OF = 1, 3.0, 16  # the largest of the first 16 samples
FULL_SAMPLES, FULL_BUDGET_S = 4, 10.0


def is_testable(key: str) -> bool:
    """Runs in both dtypes on the CPU, deterministically (jiterator entries list CPU dtypes but run on GPUs only)."""
    op = OPS[key]
    both = {torch.bfloat16, torch.float16} <= set(op.supported_dtypes("cpu"))
    return both and not op.has_nondeterministic_output and key not in RANDOM and not key.startswith("jiterator")


CI_KEYS = (
    "nn.functional.linear",
    "matmul",
    "baddbmm",
    "nn.functional.conv2d",
    "nn.functional.layer_norm",
    "nn.functional.rms_norm",
    "nn.functional.batch_norm",
    "nn.functional.group_norm",
    "softmax",
    "log_softmax",
    "nn.functional.gelu",
    "nn.functional.silu",
    "sigmoid",
    "tanh",
    "exp",
    "rsqrt",
    "sum",
    "mean",
    "var",
    "cumsum",
    "nn.functional.cross_entropy",
    "nn.functional.scaled_dot_product_attention",
    "nn.functional.embedding",
    "mul",
    "div.no_rounding_mode",
    "where",
    "pow",
)
DTYPE_IDS = pytest.mark.parametrize("dtype", list(DTYPES))


def test_ci_subset_is_testable():
    """Every CI entry runs in both dtypes on the CPU, deterministically: each of its tests judges irc."""
    assert [k for k in CI_KEYS if not is_testable(k)] == []
    assert len([k for k in OPS if is_testable(k)]) > 400  # what the full sweep judges


@DTYPE_IDS
@pytest.mark.parametrize("key", CI_KEYS)
def test_low_precision_opinfo_ci(key, dtype):
    out = run_entry(OPS[key], DTYPES[dtype], CI_SAMPLES, CI_BUDGET_S, largest_of=CI_LARGEST_OF)
    assert out.status == "ok", f"{key} in {dtype}: {out.status}: {out.reason}"


def _full_params():
    if not FULL:
        return [("all", "bf16")]
    return [(k, d) for k in sorted(k for k in OPS if is_testable(k)) for d in DTYPES]


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="the full low-precision op_db sweep runs with IRC_OPINFO_FULL=1")
@pytest.mark.parametrize("key,dtype", _full_params())
def test_low_precision_opinfo_full(key, dtype):
    out = run_entry(OPS[key], DTYPES[dtype], FULL_SAMPLES, FULL_BUDGET_S)
    assert out.status in ("ok", "untestable"), f"{key} in {dtype}: {out.status}: {out.reason}"
