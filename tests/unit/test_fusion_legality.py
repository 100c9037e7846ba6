"""Fusion legality returns a plan or the reason it refuses; the policy returns None or its reason."""

import pytest
from xdsl.dialects import func

from irc.dialects import ALL_DIALECTS, loop
from irc.ir import make_context, parse_module
from irc.lowering.fusion.legality import (
    EpiloguePlan,
    SiblingPlan,
    VerticalPlan,
    why_not_epilogue,
    why_not_retype,
    why_not_sibling,
    why_not_vertical,
)
from irc.lowering.fusion.policy import Policy, cost, depth


def nests(src: str) -> list:
    module = parse_module(make_context(ALL_DIALECTS), src)
    module.verify()
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return [op for op in f.body.block.ops if isinstance(op, loop.NestOp) or op.name.startswith("tn.")]


def nest(name: str, space: str, iterators: str, result: str, body: str, symbols: str = "") -> str:
    sym = f" symbols({symbols})" if symbols else ""
    return (
        f"  %{name} = loop.nest space = affine_map<{space}>{sym} iterators = {iterators} : {result} {{\n{body}\n  }}\n"
    )


POINTWISE = nest(
    "p",
    "() -> (4, 8)",
    '["parallel", "parallel"]',
    "tensor<4x8xf32>",
    "    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
    "    %1 = math.exp %0 : f32\n    loop.yield %1 : f32",
)
ROWSUM = nest(
    "s",
    "() -> (4, 8)",
    '["parallel", "reduction"]',
    "tensor<4x1xf32>",
    "    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
    "    %1 = loop.reduce sum %0 : f32 -> f32\n    loop.yield %1 : f32",
)


def program(*bodies: str, ret: str = "%x : tensor<4x8xf32>", args: str = "%x: tensor<4x8xf32>") -> str:
    rtype = ret.split(" : ")[1]
    rtype = f"({rtype})" if "," in rtype else rtype
    return f"func.func @f({args}) -> {rtype} {{\n{''.join(bodies)}  func.return {ret}\n}}"


def consumer(
    src: str,
    map_: str = "(d0, d1) -> (d0, d1)",
    space: str = "() -> (4, 8)",
    iters: str = '["parallel", "parallel"]',
    src_type: str = "tensor<4x8xf32>",
    name: str = "c",
) -> str:
    return nest(
        name,
        space,
        iters,
        "tensor<4x8xf32>" if "8)" in space and "4, 8" in space else "tensor<4xf32>",
        f"    %0 = loop.load %{src}[affine_map<{map_}>] : {src_type} -> f32\n    %1 = math.tanh %0 : f32\n    loop.yield %1 : f32",
    )


def test_pointwise_into_pointwise_is_a_plain_inline():
    p, c = nests(program(POINTWISE, consumer("p"), ret="%c : tensor<4x8xf32>"))
    plan = why_not_vertical(p, c)
    assert isinstance(plan, VerticalPlan) and not plan.keep and not plan.stays and plan.reduction == ()
    assert Policy().vertical(plan) is None


def test_producer_with_another_user_is_kept_as_an_output():
    p, c = nests(program(POINTWISE, consumer("p"), ret="%p, %c : tensor<4x8xf32>, tensor<4x8xf32>"))
    plan = why_not_vertical(p, c)
    assert isinstance(plan, VerticalPlan) and plan.keep and not plan.stays


def test_reduction_epilogue_over_the_rows_it_reduced():
    s, c = nests(
        program(ROWSUM, consumer("s", "(d0, d1) -> (d0, 0)", src_type="tensor<4x1xf32>"), ret="%c : tensor<4x8xf32>")
    )
    plan = why_not_vertical(s, c)
    assert isinstance(plan, VerticalPlan) and plan.reduction == (1,)


def test_a_consumer_reducing_other_dims_is_refused():
    total = nest(
        "c",
        "() -> (4, 8)",
        '["reduction", "reduction"]',
        "tensor<1x1xf32>",
        "    %0 = loop.load %s[affine_map<(d0, d1) -> (d0, 0)>] : tensor<4x1xf32> -> f32\n"
        "    %1 = loop.reduce sum %0 : f32 -> f32\n    loop.yield %1 : f32",
    )
    s, c = nests(program(ROWSUM, total, ret="%c : tensor<1x1xf32>"))
    assert why_not_vertical(s, c) == "reduction dims differ"


def test_reduction_into_a_smaller_space_needs_the_epilogue_rule():
    s, c = nests(
        program(
            ROWSUM,
            consumer("s", "(d0) -> (d0, 0)", space="() -> (4)", iters='["parallel"]', src_type="tensor<4x1xf32>"),
            ret="%c : tensor<4xf32>",
        )
    )
    assert why_not_vertical(s, c) == "no consumer dim matches the producer's reduction extent"
    assert isinstance(why_not_epilogue(s, c), EpiloguePlan)


def test_extern_producer_is_refused():
    src = (
        "func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {\n"
        "  %m = tn.mm %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>\n"
        + consumer("m")
        + "  func.return %c : tensor<4x8xf32>\n}"
    )
    m, c = nests(src)
    assert why_not_vertical(m, c) == "producer is an extern (tn.mm)"


def test_siblings_over_one_space_merge_and_different_reductions_do_not():
    a, b = nests(program(POINTWISE, ROWSUM, ret="%p, %s : tensor<4x8xf32>, tensor<4x1xf32>"))
    plan = why_not_sibling(a, b)
    assert isinstance(plan, SiblingPlan) and plan.reduction == (1,)
    cols = nest(
        "t",
        "() -> (4, 8)",
        '["reduction", "parallel"]',
        "tensor<1x8xf32>",
        "    %0 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
        "    %1 = loop.reduce sum %0 : f32 -> f32\n    loop.yield %1 : f32",
    )
    s, t = nests(program(ROWSUM, cols, ret="%s, %t : tensor<4x1xf32>, tensor<1x8xf32>"))
    assert why_not_sibling(s, t) == "different reduction dims"


def _scaled(name: str, src: str, n: int) -> str:  # src * the 0-d %k, over n x n
    return nest(
        name,
        f"() -> ({n}, {n})",
        '["parallel", "parallel"]',
        f"tensor<{n}x{n}xf32>",
        f"    %0 = loop.load %{src}[affine_map<(d0, d1) -> (d0, d1)>] : tensor<{n}x{n}xf32> -> f32\n"
        "    %1 = loop.load %k[affine_map<(d0, d1) -> ()>] : tensor<f32> -> f32\n"
        "    %2 = arith.mulf %0, %1 : f32\n    loop.yield %2 : f32",
    )


@pytest.mark.parametrize("n, fused", [(512, False), (64, True)])
def test_big_siblings_sharing_only_a_scalar_stay_apart(n, fused):
    """Two updates of different 512x512 buffers by one 0-d step size (AdamW's weights) read nothing once by fusing:
    one kernel would stream all their buffers at once. Small ones still fuse (one launch for both)."""
    t = f"tensor<{n}x{n}xf32>"
    a, b = nests(
        program(
            _scaled("a", "x", n),
            _scaled("b", "y", n),
            ret=f"%a, %b : {t}, {t}",
            args=f"%x: {t}, %y: {t}, %k: tensor<f32>",
        )
    )
    plan = why_not_sibling(a, b)
    assert isinstance(plan, SiblingPlan)
    want = None if fused else "shares only small inputs: one pass would stream both nests' buffers at once"
    assert Policy().sibling(plan) == want
    big = nests(
        program(_scaled("a", "x", n), _scaled("b", "x", n), ret=f"%a, %b : {t}, {t}", args=f"%x: {t}, %k: tensor<f32>")
    )
    assert Policy().sibling(why_not_sibling(*big)) is None  # a common 512x512 input: read once


def test_dependent_nests_are_not_siblings():
    p, c = nests(
        program(
            POINTWISE,
            nest(
                "c",
                "() -> (4, 8)",
                '["parallel", "parallel"]',
                "tensor<4x8xf32>",
                "    %0 = loop.load %p[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
                "    %1 = loop.load %x[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
                "    %2 = arith.addf %0, %1 : f32\n    loop.yield %2 : f32",
            ),
            ret="%c : tensor<4x8xf32>",
        )
    )
    assert why_not_sibling(p, c) == "one nest depends on the other"


def test_different_spaces_are_not_siblings():
    other = nest(
        "q",
        "() -> (8, 4)",
        '["parallel", "parallel"]',
        "tensor<8x4xf32>",
        "    %0 = loop.load %x[affine_map<(d0, d1) -> (d1, d0)>] : tensor<4x8xf32> -> f32\n    loop.yield %0 : f32",
    )
    p, q = nests(program(POINTWISE, other, ret="%p, %q : tensor<4x8xf32>, tensor<8x4xf32>"))
    assert why_not_sibling(p, q) == "different iteration spaces"


def test_a_squeeze_copy_becomes_the_producers_output_shape():
    squeeze = nest(
        "q",
        "() -> (4)",
        '["parallel"]',
        "tensor<4xf32>",
        "    %0 = loop.load %s[affine_map<(d0) -> (d0, 0)>] : tensor<4x1xf32> -> f32\n    loop.yield %0 : f32",
    )
    s, q = nests(program(ROWSUM, squeeze, ret="%q : tensor<4xf32>"))
    assert why_not_retype(s, q) == 0
    p, c = nests(program(POINTWISE, consumer("p"), ret="%c : tensor<4x8xf32>"))
    assert why_not_retype(p, c) == "consumer is not a copy"


@pytest.mark.parametrize("limit, refused", [(24, False), (0, True)])
def test_policy_bounds_recomputation(limit, refused):
    flip = nest(
        "c",
        "() -> (4, 8)",
        '["parallel", "parallel"]',
        "tensor<4x8xf32>",
        "    %0 = loop.load %p[affine_map<(d0, d1) -> (d0, d1)>] : tensor<4x8xf32> -> f32\n"
        "    %1 = loop.load %p[affine_map<(d0, d1) -> (d0, 7 - d1)>] : tensor<4x8xf32> -> f32\n"
        "    %2 = arith.addf %0, %1 : f32\n    loop.yield %2 : f32",
    )
    p, c = nests(program(POINTWISE, flip, ret="%c : tensor<4x8xf32>"))
    plan = why_not_vertical(p, c)
    reason = Policy(max_recompute_cost=limit).vertical(plan)
    assert (reason == "would recompute the producer (1 ops) 1 more time(s)") == refused


def test_policy_never_recomputes_a_reduction_and_counts_passes():
    s, c = nests(
        program(
            ROWSUM,
            consumer("s", "(d0, d1) -> (d0, 0)", src_type="tensor<4x1xf32>"),
            ret="%s, %c : tensor<4x1xf32>, tensor<4x8xf32>",
        )
    )
    plan = why_not_vertical(s, c)
    assert plan.keep  # kept as an output: no recomputation
    plan.keep, plan.stays = False, True
    assert Policy().vertical(plan) == "would recompute a reduction 1 more time(s)"
    assert depth(s) == 1 and cost(s) == 1
    assert (
        Policy(max_reduction_depth=0).vertical(why_not_vertical(s, c))
        == "fused nest would need more than 0 passes over its rows"
    )
