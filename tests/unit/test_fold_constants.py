"""fold-constants evaluates with the one table of op meanings (dialects/semantics), the reference target's too:
every op it folds has a meaning there, and that meaning evaluates the op's static form (what fold-constants sees:
no size operands, one result) on its docstring example with random operands, giving the result type's shape."""

import pytest
import torch

from irc.dialects import ALL_DIALECTS
from irc.dialects.semantics import SEMANTICS
from irc.ir import make_context
from irc.ir.examples import parse_example
from irc.ir.types import torch_dtype
from irc.lowering.fold_constants import FOLDABLE
from tests.unit.test_op_examples import docstring_example


def _random(t, gen):
    dtype, shape = torch_dtype(t.get_element_type()), list(t.get_shape())
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(0, 3, shape, generator=gen, dtype=dtype)
    return (torch.rand(shape, generator=gen) + 0.5).to(dtype)  # positive: rsqrt, sqrt, reciprocal of a real number


# static stand-ins for the examples with `?` sizes (fold-constants folds static shapes only)
STATIC = {
    "tn.iota": "%r = tn.iota : tensor<6xi64>",
    "tn.reshape": "%r = tn.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>",
}


def test_every_foldable_op_has_a_meaning():
    assert FOLDABLE <= SEMANTICS.keys(), sorted(c.name for c in FOLDABLE - SEMANTICS.keys())


@pytest.mark.parametrize("op_class", sorted(FOLDABLE, key=lambda c: c.name), ids=lambda c: c.name)
def test_foldable_ops_evaluate_on_their_static_examples(op_class):
    example = STATIC.get(op_class.name) or docstring_example(op_class)
    module = parse_example(make_context(ALL_DIALECTS), example)
    op = module.body.block.first_op
    assert all(r.type.has_static_shape() for r in op.results), example
    assert len(op.results) == 1, example  # fold-constants folds single-result ops
    gen = torch.Generator().manual_seed(0)
    args = [_random(a.type, gen) for a in module.body.block.args]
    out = SEMANTICS[op_class](op, *args)
    assert isinstance(out, torch.Tensor) and list(out.shape) == list(op.result.type.get_shape()), example
