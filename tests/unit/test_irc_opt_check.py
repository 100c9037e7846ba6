"""The machinery under irc-opt's checks: random inputs from signatures, f32 -> f64 widening, result comparison, match counting, instruments."""

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irc.dialects import ALL_DIALECTS
from irc.dialects import tensor as tn
from irc.ir import apply_rules, make_context, parse_module, rule, run_passes
from irc.ir.check import compare, dynamic_size, entry_points, random_args, widen_f32
from irc.ir.passes import Instrument
from irc.ir.rules import count_matches
from irc.lowering import LOOP, PASSES

CTX = make_context(ALL_DIALECTS)

MIXED = """\
func.func @main(%n: index, %x: tensor<?x3xf32>, %y: tensor<?x3xf32>, %i: tensor<?xi64>, %b: tensor<2xi1>) -> tensor<?x3xf32> {
  %s = tn.add %x, %y : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  func.return %s : tensor<?x3xf32>
}
func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
"""


def parse(text: str) -> ModuleOp:
    return parse_module(CTX, text)


def test_random_args_share_one_size_for_every_symbolic_dim():
    fn = next(op for op in parse(MIXED).body.block.ops if isinstance(op, func.FuncOp))
    n, x, y, i, b = random_args(fn, seed=2)
    size = dynamic_size(2)
    assert n == size and x.shape == y.shape == (size, 3) and i.shape == (size,) and b.shape == (2,)
    assert x.dtype == torch.float32 and i.dtype == torch.int64 and b.dtype == torch.bool
    assert set(i.tolist()) <= {1, 2}
    again = random_args(fn, seed=2)
    assert torch.equal(again[1], x) and not torch.equal(random_args(fn, seed=3)[1][:1], x[:1])


def test_given_arguments_replace_random_ones_without_moving_the_others():
    fn = next(op for op in parse(MIXED).body.block.ops if isinstance(op, func.FuncOp))
    plain = random_args(fn, seed=0)
    given = random_args(fn, seed=0, given=[None, torch.ones(dynamic_size(0), 3, dtype=torch.float64)])
    assert given[1].dtype == torch.float32 and bool((given[1] == 1).all())
    assert torch.equal(given[2], plain[2])


def test_entry_points_skip_referenced_functions():
    module = parse(MIXED)
    assert entry_points(module) == ["main", "helper"]
    text = "func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n  %e = tn.exp %a : tensor<8xf32>\n  func.return %e : tensor<8xf32>\n}\n"
    mem = parse(text)
    run_passes(CTX, mem, (*LOOP, PASSES["bufferize"]))
    assert entry_points(mem) == ["main"]  # @kernel0 is launched, not an entry


def test_widen_f32_retypes_everything():
    text = """\
    func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
      %r = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xf32> {
        %0 = loop.load %a[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32
        %1 = arith.constant 0.707106769 : f32
        %2 = arith.mulf %0, %1 : f32
        loop.yield %2 : f32
      }
      func.return %r : tensor<8xf32>
    }
    """
    module = parse(text)
    wide = widen_f32(module)
    printed = str(wide)
    assert "f32" not in printed and "tensor<8xf64>" in printed and "arith.constant 0.707106769" in printed
    assert "f64" not in str(module)  # the original is untouched


def test_widen_f32_declines_when_it_could_change_the_meaning():
    f16 = "func.func @main(%a: tensor<8xf16>, %b: tensor<8xf32>) -> tensor<8xf32> {\n  func.return %b : tensor<8xf32>\n}\n"
    assert widen_f32(parse(f16)) is None
    f32 = "func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n  %e = tn.exp %a : tensor<8xf32>\n  func.return %e : tensor<8xf32>\n}\n"
    assert widen_f32(parse(f32)) is not None
    assert widen_f32(parse(f32), keep=lambda op: isinstance(op, tn.ExpOp)) is None


def test_compare_says_how_results_differ():
    a = torch.arange(6.0).reshape(2, 3)
    assert compare([a], [a + 1e-9]) is None
    b = a.clone()
    b[1, 2] = 0.5
    assert compare([a], [b]) == "result 0 at [1, 2] is 0.5, was 5.0 (1 of 6 elements differ)"
    assert compare([a], [a.double()]) == "result 0 is torch.float64 [2, 3], was torch.float32 [2, 3]"
    assert compare([a], [a, a]) == "2 results instead of 1"
    assert compare([torch.tensor([float("nan")])], [torch.tensor([float("nan")])]) is None
    assert compare([torch.tensor([1, 2])], [torch.tensor([1, 3])]).startswith("result 0 at [1] is 3, was 2")
    assert compare([3], [4]) == "result 0 is 4, was 3"


def test_result_check_runs_random_ops_on_the_same_numbers():
    text = "func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n  %r = tn.rand : tensor<8xf32>\n  %s = tn.add %a, %r : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>\n  func.return %s : tensor<8xf32>\n}\n"
    from irc.targets.reference.check import reference_check

    check = reference_check(seed=4)
    passes = (*PASSES.values(),)[:2]
    run_passes(CTX, parse(text), passes, instruments=[check])
    assert check.checked == [p.name for p in passes] and not check.unchecked


# -- match counting ---------------------------------------------------------------------------------


@rule(tn.NegOp)
def fold_neg_neg(op):
    inner = op.input.owner
    return inner.input if isinstance(inner, tn.NegOp) else None


class FoldAbsAbs(RewritePattern):
    """A plain xDSL pattern (not a Rule): abs(abs(x)) -> abs(x)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if isinstance(op, tn.AbsOp) and isinstance(op.input.owner, tn.AbsOp):
            rewriter.replace(op, (), (op.input,))


NEGS = """\
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %n = tn.neg %a : tensor<8xf32>
  %m = tn.neg %n : tensor<8xf32>
  %k = tn.neg %m : tensor<8xf32>
  %l = tn.neg %k : tensor<8xf32>
  %b = tn.abs %l : tensor<8xf32>
  %c = tn.abs %b : tensor<8xf32>
  func.return %c : tensor<8xf32>
}
"""


def test_count_matches_counts_rules_by_name_and_patterns_by_class_and_op():
    module = parse(NEGS)
    with count_matches() as counts:
        apply_rules(module, (fold_neg_neg, FoldAbsAbs()))
    assert counts == {"fold_neg_neg": 2, "FoldAbsAbs(tn.abs)": 1}
    assert "tn.neg" not in str(module)


def test_counting_is_off_by_default_and_does_not_leak():
    module = parse(NEGS)
    with count_matches() as counts:
        pass
    apply_rules(module, (fold_neg_neg,))
    assert not counts


def test_instruments_see_passes_in_order_and_failures():
    seen = []

    class Log(Instrument):
        def __init__(self, tag):
            self.tag = tag

        def before(self, p, m):
            seen.append(("before", self.tag, p.name))

        def after(self, p, m):
            seen.append(("after", self.tag, p.name))

        def failed(self, p, m, e):
            seen.append(("failed", self.tag, p.name, type(e).__name__))

    module = parse(NEGS)
    run_passes(CTX, module, (PASSES["cse"],), instruments=[Log(1), Log(2)])
    assert seen == [("before", 1, "cse"), ("before", 2, "cse"), ("after", 2, "cse"), ("after", 1, "cse")]
    seen.clear()

    class Boom(type(PASSES["cse"])):
        name = "boom"

        def apply(self, ctx, op):
            raise RuntimeError("boom")

    try:
        run_passes(CTX, module, (Boom(),), instruments=[Log(1)])
    except RuntimeError:
        pass
    assert seen == [("before", 1, "boom"), ("failed", 1, "boom", "RuntimeError")]


def test_result_check_raises_for_a_wrong_pass():
    from irc.ir.check import ResultMismatch
    from irc.targets.reference.check import reference_check
    from irc.tools.test_passes import SwapOperandsPass

    text = "func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {\n  %s = tn.sub %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>\n  func.return %s : tensor<8xf32>\n}\n"
    try:
        run_passes(CTX, parse(text), (PASSES["cse"], SwapOperandsPass()), instruments=[reference_check()])
    except ResultMismatch as e:
        assert e.pass_.name == "test-swap-operands" and e.entry == "main" and "tn.sub %a, %b" in e.before
        assert str(e).endswith("(8 of 8 elements differ) (run in f64)")
    else:
        raise AssertionError("the swap went unnoticed")
