"""The fuzzer's own parts: programs as data, their rendering, the inputs they build, the oracle, the CLI."""

import torch
from hypothesis import given

from irc.tools.fuzz.oracle import close
from irc.tools.fuzz.profiles import profile
from irc.tools.fuzz.programs import Input, Op, Program, load, source
from irc.tools.fuzz.strategies import programs

PROGRAM = Program(
    inputs=(
        Input((2, 3), layout="transposed", seed=0),
        Input((3,), "i64", seed=1),
        Input((4, 3), layout="expanded", expanded=(0,), seed=2),
    ),
    ops=(
        Op("neg", (0,), "torch.neg({0})"),
        Op("add", (0, 1), "torch.add({0}, {1})"),
        Op("sum", (4,), "{0}.sum(dim=(1,), keepdim=True)"),
    ),
    outputs=(5,),
)


def test_live_drops_dead_ops_and_unused_inputs_and_keeps_input_values():
    live = PROGRAM.live()
    assert [op.kind for op in live.ops] == ["add", "sum"] and len(live.inputs) == 2
    assert live.ops[0].args == (0, 1) and live.outputs == (3,)
    full, small = load(PROGRAM), load(live)
    torch.testing.assert_close(full.fn(*full.make_inputs())[0], small.fn(*small.make_inputs())[0])


def test_inputs_have_the_layouts_they_say():
    a, b, c = load(PROGRAM).make_inputs()
    assert a.shape == (2, 3) and not a.is_contiguous() and a.stride() == (1, 2)
    assert b.dtype == torch.int64 and c.shape == (4, 3) and c.stride() == (0, 1)
    assert torch.equal(a * 8, (a * 8).round())  # values are multiples of 1/8: sums of a few are exact
    strided = load(Program((Input((3, 2), layout="strided"), Input((2, 2), layout="offset")), (), ())).make_inputs()
    assert strided[0].stride() == (4, 2) and strided[1].storage_offset() == 2


def test_source_is_a_runnable_reproducer():
    text = source(PROGRAM, options={"target": "reference"})
    namespace = {"__name__": "not_main"}
    exec(compile(text, "repro.py", "exec"), namespace)
    assert namespace["fn"](*namespace["make_inputs"]())[0].shape == (2, 1)
    assert "options={'strict': True, 'target': 'reference'}" in text and "if __name__ == '__main__':" in text


def test_float64_decides_where_eager_and_irc_disagree():
    f64 = torch.float64
    assert (
        close(torch.tensor([3.0]), torch.tensor([4.0]), torch.tensor([3.0], dtype=f64)) is None
    )  # irc agrees with float64
    assert "float64 gives 3.0" in close(torch.tensor([5.0]), torch.tensor([4.0]), torch.tensor([3.0], dtype=f64))
    half = torch.tensor([2.0], dtype=torch.float16)
    assert close(half + 0.001, half) is None  # within float16's tolerance
    assert close(torch.tensor([True, False]), torch.tensor([True, True])) is not None  # exact for the rest
    assert "float32" in close(half.float(), half)  # dtypes must match


@profile(max_examples=20)
@given(programs())
def test_generated_programs_run_eagerly_and_stay_small(p):
    loaded = load(p)
    outs = loaded.fn(*loaded.make_inputs())
    assert p.ops and all(o.numel() <= 256 for o in outs)


def test_a_program_reading_uninitialised_memory_is_not_judged():
    """torch 2.13's bf16 convolution_backward on CPU leaves weight-gradient taps that only meet padding unwritten."""
    from irc.tools.fuzz.oracle import deterministic

    assert deterministic(lambda x: x * 2, lambda: [torch.ones(3)], training=False)
    assert not deterministic(lambda x: torch.empty(64) + x.sum(), lambda: [torch.ones(3)], training=False)


def features(p) -> set[str]:
    """What a program exercises, in the words of the issue's list."""
    sizes = {n for x in p.inputs for n in x.shape}
    kinds = {op.kind for op in p.ops}
    exprs = " ".join(op.expr for op in p.ops)
    groups = {
        "matmul": ("mm", "bmm", "matmul", "linear", "addmm"),
        "conv": ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"),
        "permute": ("permute", "transpose", "t", "movedim"),
        "slice": ("slice", "narrow"),
        "expand": ("expand", "broadcast_to"),
        "select": ("select",),
        "reshape": ("reshape", "view", "flatten", "unflatten"),
    }
    out = {g for g, members in groups.items() if kinds & set(members)}
    out |= {"2-d matmul" for k in kinds if k in ("mm", "addmm")} | {"batched matmul" for k in kinds if k == "bmm"}
    out |= {f"keepdim={k}" for k in ("True", "False") if f"keepdim={k}" in exprs}
    out |= {f"size {n}" for n in (0, 1) if n in sizes} | (
        {"prime size"} & {"prime size" for n in sizes if n in (3, 5, 7, 13)}
    )
    out |= {x.layout for x in p.inputs} | {"dynamic" for x in p.inputs if x.dynamic}
    out |= {"mixed dtypes"} if len({x.dtype for x in p.inputs}) > 1 else set()
    out |= {"training"} if p.training and any(x.grad for x in p.inputs) else set()
    return out


def sample(strategy, n: int) -> set[str]:
    from hypothesis import Phase

    seen: set[str] = set()

    @profile(max_examples=n, phases=[Phase.generate])
    @given(strategy)
    def collect(p):
        seen.update(features(p))

    collect()
    return seen


def test_the_strategies_generate_everything_the_issue_lists():
    """Broadcasting DAGs, reductions with and without keepdim, views, matmul and convolution, mixed dtypes,
    non-contiguous and expanded (stride-0) inputs, sizes 0, 1 and primes, dynamic dims, and training programs."""
    from hypothesis import strategies as st

    from irc.tools.fuzz.strategies import training_programs

    checks = [
        (programs(families=("matmul", "conv")), {"matmul", "2-d matmul", "batched matmul", "conv"}),
        (
            programs(families=("permute", "slice", "expand", "select", "reshape", "reduction")),
            {"permute", "slice", "expand", "select", "reshape", "keepdim=True", "keepdim=False"},
        ),
        (
            st.one_of(programs(), training_programs()),
            {
                "size 0",
                "size 1",
                "prime size",
                "transposed",
                "strided",
                "offset",
                "expanded",
                "dynamic",
                "mixed dtypes",
                "training",
            },
        ),
    ]
    for strategy, want in checks:
        seen = sample(strategy, 150)
        assert want <= seen, f"never generated: {sorted(want - seen)}"


def test_where_torch_meta_and_eager_kernels_disagree_on_a_dtype_the_meta_is_the_reference():
    """bool ** True is bool in eager but int64 in torch's meta functions, which type every torch.compile graph."""
    from irc.tools.fuzz.oracle import compare, meta_dtypes

    def fn(x):
        return (x > 0) ** True, x * 2

    def make_inputs():
        return [torch.tensor([0.5, -1.0, 0.0])]

    assert meta_dtypes(lambda x: x * 2, make_inputs) is None
    dtypes = meta_dtypes(fn, make_inputs)
    assert dtypes == [torch.int64, torch.float32]
    as_meta = lambda x: (((x > 0) ** True).long(), x * 2)  # noqa: E731
    assert "eager gives torch.bool" in compare(fn, as_meta, make_inputs)
    assert compare(fn, as_meta, make_inputs, dtypes) is None
