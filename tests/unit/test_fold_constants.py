"""fold-constants evaluates with its own small torch table (lowering may not import the reference target):
each entry gives what the reference semantics give, on each op's docstring example with random operands."""

import pytest
import torch

from irc.dialects import ALL_DIALECTS
from irc.ir import make_context
from irc.ir.examples import parse_example
from irc.ir.types import torch_dtype
from irc.lowering.fold_constants import EVAL
from irc.targets.reference import SEMANTICS
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


@pytest.mark.parametrize("op_class", list(EVAL), ids=lambda c: c.name)
def test_fold_table_agrees_with_the_reference(op_class):
    example = STATIC.get(op_class.name) or docstring_example(op_class)
    module = parse_example(make_context(ALL_DIALECTS), example)
    op = module.body.block.first_op
    assert all(r.type.has_static_shape() for r in op.results), example
    gen = torch.Generator().manual_seed(0)
    args = [_random(a.type, gen) for a in module.body.block.args]
    want = SEMANTICS[op_class](op, *args)
    torch.testing.assert_close(EVAL[op_class](op, *args), want)
