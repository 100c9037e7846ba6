"""bench/roofline.py and bench/bounds.py without timing: the work of a step (flops, bytes, problems) from a
compiled graph, and a report's split of a call (a fake clock and a fake profile, so nothing depends on load)."""

import torch
import torch.nn.functional as F

from irc.bench import arithmetic, bounds, roofline
from irc.dynamo.backend import compile_function


def _program(fn, *inputs):
    run, constants = compile_function(fn, *inputs, strict=True, cache=False)
    return run, [*inputs, *constants]


def _steps(program, kind):
    return [st for st in program.compiled.g.steps if st.kind == kind]


def test_flops_of_known_products():
    assert bounds.flops({"op": "tn.mm", "shapes": [(32, 1024), (1024, 10)]}) == 2 * 32 * 1024 * 10
    assert bounds.flops({"op": "tn.bmm", "shapes": [(8, 16, 64), (8, 64, 32)]}) == 2 * 8 * 16 * 64 * 32
    conv = {"op": "tn.convolution", "shapes": [(2, 3, 8, 8), (4, 3, 3, 3)], "out": (2, 4, 8, 8), "transposed": False}
    assert bounds.flops(conv) == 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3)
    sdpa = {"op": "tn.sdpa", "shapes": [(2, 4, 16, 8), (2, 4, 32, 8), (2, 4, 32, 8)]}
    assert bounds.flops(sdpa) == 2 * (2 * 4 * 16) * 32 * (8 + 8)


def test_problems_come_from_the_compiled_graph():
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(4)
    program, _ = _program(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b)
    (st,) = [s for s in _steps(program, "extern") if bounds.problem(program.compiled.g, s) is not None]
    p = bounds.problem(program.compiled.g, st)
    assert p["op"] == "tn.convolution" and p["padding"] == [1, 1] and p["dtype"] == "float32"
    assert sorted(p["shapes"][0]) == [2, 3, 8, 8] and p["shapes"][1] == (4, 3, 3, 3)  # NCHW or NHWC, as chosen
    assert bounds.flops(p) == 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3)
    assert "p[1, 1] +bias" in bounds.describe(p)  # what the best time depends on keys its measurement
    a, m = torch.randn(16, 64), torch.randn(64, 32)
    program, _ = _program(lambda a, m: a @ m, a, m)
    (st,) = _steps(program, "extern")
    p = bounds.problem(program.compiled.g, st)
    assert (p["op"], p["shapes"]) == ("tn.mm", [(16, 64), (64, 32)])
    assert bounds.describe(p) == "tn.mm 16x64 @ 64x32 float32"


def test_kernel_bytes_count_each_buffer_once_and_a_broadcast_row_once():
    x, b = torch.randn(64, 128), torch.randn(128)
    program, _ = _program(lambda x, b: torch.relu(x + b), x, b)
    (st,) = _steps(program, "launch")
    # x read once, b (broadcast along the rows) read once, the result written once
    assert bounds.kernel_bytes(program.compiled.g, st) == (64 * 128 + 128 + 64 * 128) * 4


def test_a_gather_moves_the_rows_it_reads_not_the_table():
    table, ids = torch.randn(1000, 64), torch.randint(0, 1000, (8,))
    program, _ = _program(lambda t, i: t[i] * 2, table, ids)
    (st,) = _steps(program, "launch")
    assert bounds.kernel_bytes(program.compiled.g, st) <= (8 * 64 * 4) * 2 + 8 * 8  # rows read, rows written, the ids


def test_a_step_is_bounded_by_the_copy_bandwidth_of_its_size():
    bw = bounds.Bandwidth(10.0, {1 << 20: 80.0, 16 << 20: 40.0})
    assert bw.gbps(1000) == bw.gbps(1 << 20) == 80.0  # what the small copy held
    assert bw.gbps((1 << 20) + 1) == bw.gbps(16 << 20) == 40.0
    assert bw.gbps(64 << 20) == 10.0 and bw.seconds(10**9) == 0.1  # beyond the caches: main memory


def test_a_report_classifies_every_step_and_adds_up_with_a_fake_timer(monkeypatch):
    monkeypatch.setattr(roofline, "vector_rate", lambda: 1e18)  # arithmetic bounds nothing here
    x, w, bias = torch.randn(32, 64), torch.randn(64, 48), torch.randn(48)
    program, args = _program(lambda x, w, b: torch.tanh(x @ w + b) * 2, x, w, bias)
    names = [n for n, _ in program.profile(args, reps=1)]
    now = [0.0]

    def clock():  # every timed call of the model takes 2**-7 s (binary fractions: the sums are exact)
        now[0] += 2**-7
        return now[0]

    def profile(p, a, reps):  # every step 2**-10 s
        assert p is program and a is args
        return [(n, 2**-10) for n in names]

    calls = []
    found = {id(program): [program, args]}
    rates = {"tn.mm 32x64 @ 64x48 float32": (2**-11, "fake")}  # no library timing in a unit test
    r = roofline.measure(
        "tiny",
        lambda: calls.append(1),
        found,
        bounds.Bandwidth(10.0),
        rounds=3,
        reps=2,
        clock=clock,
        profile=profile,
        rates=rates,
    )
    assert len(calls) == 6 and r.measured == r.iqr[0] == r.iqr[1] == 2**-7
    assert len(r.parts) == len(names)  # one part per profiled step, in order, named after it
    for part, name in zip(r.parts, names):
        assert part.name.startswith(name.split(" (")[0]) and part.kind == {"extern": "library", "launch": "kernel"}.get(
            name.split()[0], "runtime"
        )
    kinds = {p.kind for p in r.parts}
    assert kinds <= {"library", "kernel", "runtime"} and {"library", "kernel"} <= kinds
    lib = [p for p in r.parts if p.kind == "library"]
    assert lib[0].flops == 2 * 32 * 64 * 48 and lib[0].bound == 2**-11 and lib[0].pct == 50
    for p in r.parts:
        if p.kind == "kernel":
            assert p.bytes > 0 and p.bound == p.bytes / 10e9
    steps = r.total("library") + r.total("kernel")
    assert r.overhead >= 0 and abs(steps + r.overhead - r.measured) < 1e-12
    assert 0 < r.efficiency == r.bound() / r.measured
    text = roofline.summary([r]) + roofline.detail(r)
    assert "tiny" in text and "tn.mm 32x64 @ 64x48 float32" in text


def test_math_functions_cost_the_instructions_the_math_library_emits():
    assert arithmetic.math_cost("exp") >= 8 and arithmetic.math_cost("tanh") > arithmetic.math_cost("exp")
    assert arithmetic.math_cost("sqrt") == arithmetic.math_cost("fma") == 1  # one instruction each


def test_a_rows_reductions_run_at_every_point_and_its_per_row_values_do_not():
    program, _ = _program(lambda x: torch.softmax(x, -1), torch.randn(8, 100))
    (nest,) = program.compiled.g.kernels.values()
    names = [op.name for op in arithmetic.per_point_ops(nest)]
    assert names.count("loop.reduce") == 2 and "math.exp" in names  # max, sum of exp(x - max), at every point
    assert "arith.divf" not in names  # 1 / sum: once per row
    assert (
        arithmetic.point_cost(nest, 16)
        == sum(arithmetic.math_cost(n.removeprefix("math.")) if n.startswith("math.") else 1 for n in names) / 16
    )


def test_a_kernel_of_transcendentals_is_bound_by_its_arithmetic(monkeypatch):
    x = torch.randn(64, 256)
    program, args = _program(lambda x: torch.tanh(torch.exp(x)), x)
    (st,) = _steps(program, "launch")
    ops = arithmetic.kernel_ops(program.compiled.g, st, lanes=16)
    assert ops == 64 * 256 * (arithmetic.math_cost("exp") + arithmetic.math_cost("tanh")) / 16
    names = [n for n, _ in program.profile(args, reps=1)]
    found, bw = {id(program): [program, args]}, bounds.Bandwidth(10.0)
    for rate, limit in ((1e3, "arithmetic"), (1e18, "memory")):
        monkeypatch.setattr(roofline, "vector_rate", lambda rate=rate: rate)
        r = roofline.measure(
            "chain", lambda: None, found, bw, rounds=2, reps=1, profile=lambda p, a, reps: [(n, 1.0) for n in names]
        )
        (k,) = [p for p in r.parts if p.kind == "kernel"]
        assert k.limit == limit and k.bound == max(k.bytes / 10e9, k.ops / (rate * torch.get_num_threads()))
        assert ("bound by arithmetic" in roofline.detail(r)) == (limit == "arithmetic")


def test_the_vector_rate_is_measured_and_plausible():
    rate = arithmetic.vector_rate()
    assert 1e8 < rate < 1e11  # vector instructions per second on one thread: 0.1 to 100 G


def test_capture_finds_the_programs_torch_compile_runs_and_their_arguments():
    import irc
    from irc.targets.cpu.runtime.executor import Executor
    from irc.targets.cpu.target import CpuTarget

    before = (CpuTarget.compile, Executor.__call__)
    x = torch.randn(16, 32)
    with roofline.capture() as found, torch.no_grad():
        f = torch.compile(lambda x: torch.softmax(x, -1) * 2, backend=irc.backend)
        f(x)
    assert (CpuTarget.compile, Executor.__call__) == before  # the hooks are gone
    ((program, args),) = found.values()
    assert args[0] is x and [n.split()[0] for n, _ in program.profile(args, reps=1)].count("launch") >= 1


def test_an_int8_models_float_products_are_bounded_at_the_int8_rate(monkeypatch):
    """roofline --quant int8: a product irc runs as the graph's float chain (no VNNI) is still bounded by oneDNN's
    int8 kernel for its shape, keyed and named as such; the other steps as in any model."""
    monkeypatch.setattr(roofline, "vector_rate", lambda: 1e18)
    x, w = torch.randn(32, 64), torch.randn(64, 48)
    program, args = _program(lambda x, w: torch.relu(x @ w), x, w)
    names = [n for n, _ in program.profile(args, reps=1)]
    rates = {"tn.mm 32x64 @ 64x48 int8": (2**-12, "onednn qlinear -> float32")}  # no library timing here
    r = roofline.measure(
        "q",
        lambda: None,
        {id(program): [program, args]},
        bounds.Bandwidth(10.0),
        rounds=1,
        reps=2,
        profile=lambda p, a, reps: [(n, 2**-10) for n in names],
        rates=rates,
        int8=True,
    )
    (lib,) = [p for p in r.parts if p.kind == "library"]
    assert lib.name.endswith("tn.mm 32x64 @ 64x48 int8 (irc: float32)") and lib.bound == 2**-12, lib
    assert list(rates) == ["tn.mm 32x64 @ 64x48 int8"]  # nothing measured in float32


def test_a_fused_int8_product_is_the_float_problem_it_computes():
    from irc.dialects import ALL_DIALECTS
    from irc.ir import make_context, parse_module

    text = """
    func.func @f(%x: tensor<4x16xui8>, %w: tensor<8x16xi8>, %ws: tensor<8xf32>, %wz: tensor<8xi64>, %b: tensor<8xf32>,
                 %cx: tensor<2x3x8x8xui8>, %cw: tensor<4x3x3x3xi8>, %cs: tensor<4xf32>, %cz: tensor<4xi64>) -> (tensor<4x8xi8>, tensor<2x4x8x8xui8>) {
      %y = tn.qlinear %x, %w, %ws, %wz, %b x = (0.5 : f64, 128) out = (0.1 : f64, -3) post_op = "none" : tensor<4x16xui8>, tensor<8x16xi8>, tensor<8xf32>, tensor<8xi64>, tensor<8xf32> -> tensor<4x8xi8>
      %c = tn.qconv %cx, %cw, %cs, %cz x = (0.5 : f64, 128) out = (0.1 : f64, 0) post_op = "relu" stride = [1, 1] padding = [1, 1] dilation = [1, 1] output_padding = [0, 0] groups = 1 : tensor<2x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<4xi64> -> tensor<2x4x8x8xui8>
      func.return %y, %c : tensor<4x8xi8>, tensor<2x4x8x8xui8>
    }
    """
    module = parse_module(make_context(ALL_DIALECTS), text)
    linear, conv = [op for op in module.walk() if op.name in ("tn.qlinear", "tn.qconv")]
    p = bounds._int8_problem(linear)
    assert (p["op"], p["shapes"], p["dtype"]) == ("tn.addmm", [[4, 16], [16, 8], [8]], "int8")
    assert bounds.flops(p) == 2 * 4 * 16 * 8 and bounds.describe(p) == "tn.addmm 4x16 @ 16x8 int8"
    p = bounds._int8_problem(conv)
    assert (p["op"], p["shapes"], p["padding"], p["channels_last"]) == (
        "tn.convolution",
        [[2, 3, 8, 8], [4, 3, 3, 3]],
        [1, 1],
        False,
    )
    assert bounds.flops(p) == 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3)


def test_the_int8_candidates_run_onednns_int8_kernels_on_the_problems_shapes():
    mm = {"op": "tn.addmm", "shapes": [[5, 24], [24, 7], [7]], "out": [5, 7], "dtype": "int8"}
    conv = {
        "op": "tn.convolution",
        "shapes": [[2, 5, 5, 3], [4, 3, 3, 3]],  # NHWC activations, as the IR holds them
        "out": [2, 5, 5, 4],
        "dtype": "int8",
        "stride": [1, 1],
        "padding": [1, 1],
        "dilation": [1, 1],
        "groups": 1,
        "transposed": False,
        "channels_last": True,
    }
    for p, shape in ((mm, (5, 7)), (conv, (2, 4, 5, 5))):
        c = bounds.candidates(p)
        assert len(c) == 2, list(c)
        outs = {name: fn() for name, fn in c.items()}
        assert {o.dtype for o in outs.values()} == {torch.float32, torch.uint8}
        assert all(tuple(o.shape) == shape for o in outs.values()), {n: o.shape for n, o in outs.items()}
