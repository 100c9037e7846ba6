"""tn.embedding_backward on the CPU target: the gradient rows added into the out buffer (extern_ops._embedding_backward)
instead of aten's fresh zero table copied in. Same numbers as eager's, bit for bit where the sums run in eager's
order: duplicate indices, a padding row, more than 1000 indices, narrow types, runtime sizes."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import irc
from tests.cpu.programs import build, check
from tests.numeric.low_precision import assert_low_precision_close

aten = torch.ops.aten
G = torch.Generator().manual_seed(0)


def grad_table(n: int, padding: int = -1, scale: bool = False):
    return lambda g, i: aten.embedding_dense_backward(g, i, n, padding, scale)


SHAPES = pytest.mark.parametrize(
    "shape, n, padding", [((2, 5, 16), 100, -1), ((2, 5, 16), 7, 3), ((40, 50, 8), 37, 0), ((1, 128, 48), 1000, 0)]
)


@SHAPES
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matches_eager_bit_for_bit(shape, n, padding, dtype):
    g = torch.randn(*shape, generator=G).to(dtype)
    i = torch.randint(0, n, shape[:-1], generator=G)  # many duplicates where n is small
    program, consts = build(grad_table(n, padding), g, i, cache=False)
    assert torch.equal(program([g, i, *consts])[0], grad_table(n, padding)(g, i))
    assert list(program.compiled.extern_paths.values()) == ["index_add"]


@SHAPES
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_narrow_rows_are_summed_in_float32(shape, n, padding, dtype):
    """bfloat16 and float16 gradients are summed in a float32 table and rounded once (torch's decomposition, as
    inductor's), by the library's index_add, not aten's call on the reference evaluator; judged against float64:
    never worse than eager's kernel, which rounds after every add."""
    g = torch.randn(*shape, generator=G).to(dtype)
    i = torch.randint(0, n, shape[:-1], generator=G)
    program, consts = build(grad_table(n, padding), g, i, cache=False)
    got = program([g, i, *consts])[0]
    assert list(program.compiled.extern_paths.values()) == ["index_add_f32"]
    ref = grad_table(n, padding)(g.double(), i)
    assert_low_precision_close(got, grad_table(n, padding)(g, i), ref, dtype, where="embedding gradient")


def test_scaled_by_frequency_and_runtime_sizes_match_eager():
    g, i = torch.randn(3, 6, 8, generator=G), torch.randint(0, 11, (3, 6), generator=G)
    check(grad_table(11, 2, scale=True), g, i)  # aten's own call, through the reference
    check(grad_table(11, 2), g, i, dynamic=True, more=[(torch.randn(5, 2, 8), torch.randint(0, 11, (5, 2)))])


def test_a_training_step_with_a_padded_embedding_matches_eager():
    def model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Embedding(50, 32, padding_idx=0), nn.Flatten(), nn.Linear(32 * 6, 5))

    ids, target = torch.randint(0, 50, (4, 6), generator=G), torch.randint(0, 5, (4,), generator=G)
    ids[0, :2] = 0
    eager, compiled = model(), torch.compile(model(), backend=irc.backend, options={"cache": False})
    for m in (eager, compiled):
        F.cross_entropy(m(ids), target).backward()
    for p, q in zip(eager.parameters(), compiled.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-5, atol=1e-6)
    assert compiled._orig_mod[0].weight.grad[0].abs().sum() == 0  # the padding row
