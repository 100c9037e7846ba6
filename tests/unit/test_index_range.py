"""lowering/index_range.py never claims a bound a value breaks: random integer programs (clamps, minima and maxima,
picks, iotas, widening and unsigned converts, views) run on the reference target, and every element of every
value lies inside the range the analysis proves for it, directly on the tn ops and after tensor-to-loop carried
them on the loop nests. A gather's bounds check goes exactly where no range inside its source is proven."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module
from irc.lowering import index_range
from irc.targets.reference import run_module

N = 5  # every tensor is 1-d of N elements (0-d constants broadcast)


@st.composite
def programs(draw):
    """(MLIR text of @main(%x, %y: i64 values, %c: i1), the names of its i64 values)."""
    lines, values, k = [], ["%x", "%y"], 0

    def new(text, ty="tensor<5xi64>"):
        nonlocal k
        name = f"%v{k}"
        k += 1
        lines.append(f"    {name} = {text}")
        if ty == "tensor<5xi64>":
            values.append(name)
        return name

    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["const", "iota", "min", "max", "where", "widen", "unsigned", "view"]))
        pick = lambda: draw(st.sampled_from(values))  # noqa: E731
        if kind == "const":
            c = new(f"tn.constant dense<{draw(st.integers(-20, 20))}> : tensor<i64> -> tensor<i64>", "tensor<i64>")
            new(f"tn.expand {c} : tensor<i64> -> tensor<5xi64>")
        elif kind == "iota":
            new("tn.iota : tensor<5xi64>")
        elif kind in ("min", "max"):
            op = "minimum" if kind == "min" else "maximum"
            new(f"tn.{op} {pick()}, {pick()} : tensor<5xi64>, tensor<5xi64> -> tensor<5xi64>")
        elif kind == "where":
            new(f"tn.where %c, {pick()}, {pick()} : tensor<5xi1>, tensor<5xi64>, tensor<5xi64> -> tensor<5xi64>")
        elif kind == "widen":
            narrow = new(f"tn.convert {pick()} : tensor<5xi64> -> tensor<5xi32>", "tensor<5xi32>")
            new(f"tn.convert {narrow} : tensor<5xi32> -> tensor<5xi64>")
        elif kind == "unsigned":  # i8 -> ui8 wraps a negative: no range passes unless the source is non-negative
            c = new(f"tn.constant dense<{draw(st.integers(-20, 20))}> : tensor<i8> -> tensor<i8>", "tensor<i8>")
            narrow = new(f"tn.expand {c} : tensor<i8> -> tensor<5xi8>", "tensor<5xi8>")
            wide = new(f"tn.convert {narrow} : tensor<5xi8> -> tensor<5xui8>", "tensor<5xui8>")
            new(f"tn.convert {wide} : tensor<5xui8> -> tensor<5xi64>")
        else:
            u = new(f"tn.unsqueeze {pick()} dim = 0 : tensor<5xi64> -> tensor<1x5xi64>", "tensor<1x5xi64>")
            new(f"tn.squeeze {u} dims = [0] : tensor<1x5xi64> -> tensor<5xi64>")
    outs = values[2:]
    body = "\n".join(lines)
    types = ", ".join(["tensor<5xi64>"] * len(outs))
    text = (
        f"func.func @main(%x: tensor<5xi64>, %y: tensor<5xi64>, %c: tensor<5xi1>) -> ({types}) {{\n{body}\n"
        f"    func.return {', '.join(outs)} : {types}\n}}"
    )
    return text, outs


def _claims(module):
    main = next(iter(module.body.block.ops))
    ret = main.body.block.last_op
    return [index_range.element_range(v) for v in ret.operands]


def _holds(claims, results):
    for (least, most), r in zip(claims, results):
        if least is not None:
            assert int(r.min()) >= least, (least, r)
        if most is not None:
            assert int(r.max()) <= most, (most, r)


@settings(max_examples=150, deadline=None)
@given(
    programs(),
    st.lists(st.integers(-300, 300), min_size=2 * N, max_size=2 * N),
    st.lists(st.booleans(), min_size=N, max_size=N),
)
def test_proven_ranges_hold_on_every_value(program, xy, cond):
    text, outs = program
    module = parse_module(make_context(ALL_DIALECTS), text)
    args = (torch.tensor(xy[:N]), torch.tensor(xy[N:]), torch.tensor(cond))
    results = run_module(module, args)
    _holds(_claims(module), results)


def test_ranges_reach_a_gather_through_lowered_producers():
    """After tensor-to-loop the producers are loop nests; the ranges they carried decided the check, then went."""
    from irc.lowering.tensor_to_loop import TensorToLoopPass

    text = """func.func @main(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
      %lo = tn.constant dense<-10> : tensor<i64> -> tensor<i64>
      %hi = tn.constant dense<9> : tensor<i64> -> tensor<i64>
      %a = tn.maximum %i, %lo : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
      %c = tn.minimum %a, %hi : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
      %r = tn.index %w[%c] dims = [0] : tensor<10x4xf32>[tensor<3xi64>] -> tensor<3x4xf32>
      func.return %r : tensor<3x4xf32>
    }"""
    module = parse_module(make_context(ALL_DIALECTS), text)
    TensorToLoopPass().apply(make_context(ALL_DIALECTS), module)
    printed = str(module)
    assert "tn.check_index" not in printed  # [-10, 9] is inside advanced indexing's [-10, 10)
    assert index_range.RANGES not in printed
