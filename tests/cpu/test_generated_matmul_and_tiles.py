"""The generated matmul (options={"matmul": "loops"}: lowering/matmul_loops.py) and the emitter's tile sizes
(tiles.py, chosen by default or by max-autotune), numerically against eager: odd sizes (1, primes, vector tails),
non-contiguous operands, broadcasting epilogues, dynamic dims, each tile on each kind of nest."""

import pytest
import torch
import torch.nn.functional as F

import irc
from irc import report
from irc.targets.cpu.codegen.tiles import Tile
from irc.targets.cpu.runtime.compiled import Choices, Variant

from .programs import build, check, tolerance


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))).to(dtype)


def _no_products(program) -> bool:
    return not any(st.kind == "extern" for st in program.compiled.g.steps)


MATMULS = {
    "mm": (lambda a, b: a @ b, lambda: (randn(37, 29), randn(29, 131))),
    "mm-ones": (lambda a, b: a @ b, lambda: (randn(1, 1), randn(1, 1))),
    "mm-vector-tail": (lambda a, b: a @ b, lambda: (randn(5, 17), randn(17, 33))),  # 33 = 2 vectors + 1
    "mm-transposed": (lambda a, b: a.t() @ b.t(), lambda: (randn(23, 7), randn(19, 23))),  # strided operands
    "linear-relu": (lambda x, w, b: F.linear(x, w, b).relu(), lambda: (randn(8, 96), randn(40, 96), randn(40))),
    "bmm": (lambda a, b: torch.bmm(a, b) * 0.5, lambda: (randn(3, 17, 9), randn(3, 9, 45))),
    "bmm-broadcast-epilogue": (
        lambda a, b, c: (torch.bmm(a, b) + c).sigmoid(),
        lambda: (randn(2, 5, 11), randn(2, 11, 13), randn(5, 1)),
    ),
    "matmul-4d": (lambda a, b: a @ b, lambda: (randn(2, 3, 6, 10), randn(2, 3, 10, 7))),
}


@pytest.mark.parametrize("case", sorted(MATMULS))
def test_generated_matmul_matches_eager(case):
    fn, make = MATMULS[case]
    program = check(fn, *make(), matmul="loops")
    assert _no_products(program)  # every product is a generated kernel, none a library call


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_generated_matmul_other_float_types(dtype):
    a, b = randn(13, 31, dtype=dtype), randn(31, 20, dtype=dtype)
    program, _ = build(lambda a, b: a @ b, a, b, matmul="loops")
    got = program([a, b])[0]
    # torch accumulates a bf16 product in f32 as the nest does; the rounding of the result is the one difference
    torch.testing.assert_close(got, a @ b, **tolerance(dtype))
    assert _no_products(program)


def test_generated_matmul_dynamic_sizes():
    fn = lambda a, b: torch.relu(a @ b + 1)  # noqa: E731
    check(
        fn,
        randn(6, 10),
        randn(10, 9),
        dynamic=True,
        matmul="loops",
        more=[(randn(1, 3), randn(3, 17)), (randn(41, 16), randn(16, 1))],
    )


def test_matmul_option_through_the_backend_trains():
    """options={"matmul": "loops"}: forward and backward products (mm of the gradients) all generated."""
    model = torch.nn.Sequential(torch.nn.Linear(12, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    x = randn(5, 12)
    start = report.mark()
    out = torch.compile(model, backend=irc.backend, options={"matmul": "loops", "strict": True})(x)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x)
    want.square().sum().backward()
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)
    graphs = report.reports_since(start).graphs
    assert len(graphs) == 2 and all(g.target == "cpu" and "tn.mm" not in g.externs for g in graphs), [
        g.externs for g in graphs
    ]


def test_matmul_option_is_validated():
    with pytest.raises(ValueError, match="needs target='triton'"):
        irc.options.Options.resolve(options={"matmul": "dot"})
    with pytest.raises(ValueError, match="unknown matmul 'blas'"):
        irc.options.Options.resolve(options={"matmul": "blas"})


# -- tiles --------------------------------------------------------------------------------------

TILED = {
    "generated-mm": (lambda a, b: torch.relu(a @ b + 1), lambda: (randn(37, 29), randn(29, 131))),
    "generated-bmm": (lambda a, b: torch.bmm(a, b), lambda: (randn(3, 17, 9), randn(3, 9, 45))),
    "transpose": (lambda x: x.t() * 2, lambda: (randn(67, 133),)),
    "column-sum": (lambda x: x.sum(0), lambda: (randn(130, 77),)),
    "row-softmax": (lambda x: torch.softmax(x, -1), lambda: (randn(13, 50),)),  # rows innermost: tiles do not apply
}
TILES = [Tile(4, 16), Tile(3, 7), Tile(16, 64), Tile(1, 5), Tile(32, 32)]  # odd blocks leave partial tiles


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", sorted(TILED))
def test_every_tile_computes_the_same(case, dynamic):
    fn, make = TILED[case]
    inputs = make()
    program, consts = build(fn, *inputs, dynamic=dynamic, matmul="loops", cache=False)
    want = fn(*inputs)
    for tile in TILES:
        # min_work 0: the tiles also run split across the pool
        program.rebuild(Choices([Variant(min_work=0, tile=tile)] * len(program.compiled.launches)), cache=False)
        torch.testing.assert_close(program([*inputs, *consts])[0], want, rtol=1e-4, atol=1e-4)
        plans = [ln.plan for ln in program.compiled.launches]
        if case == "row-softmax":
            assert all(p["rows"] == 1 and p["cols"] is None for p in plans), plans
        elif case != "column-sum":  # a column sum has no outer dim to block: its tile is columns only
            assert any(p["rows"] == tile.rows and p["cols"] == tile.cols for p in plans), plans


def test_tiles_split_items_as_the_runtime_counts_them():
    """An item is a block of rows x columns: the launch's item count follows the tile (what parallel_for splits)."""
    from irc.targets.cpu.runtime import steps

    program, _ = build(lambda x: x * 2 + 1, randn(133, 67), cache=False)
    (ln,) = program.compiled.launches
    assert steps.counter(ln.plan, ln.step.syms) == (133, 67)  # default: a row per item, all 67 columns
    program.rebuild(Choices([Variant(tile=Tile(16, 32))]), cache=False)
    assert steps.counter(ln.plan, ln.step.syms) == (-(-133 // 16) * -(-67 // 32), 16 * 32)


def test_the_emitter_picks_tiles_for_transposed_reads_and_column_reductions():
    from irc.targets.cpu.codegen.tuning import TRANSPOSE_TILE

    defaults = {}
    for case in ("transpose", "column-sum"):
        fn, make = TILED[case]
        program, _ = build(fn, *make(), cache=False)
        (ln,) = program.compiled.launches
        defaults[case] = (ln.plan["rows"], ln.plan["cols"])
    assert defaults == {"transpose": tuple(TRANSPOSE_TILE), "column-sum": (1, 64)}  # 77 columns: the narrowest item


@pytest.mark.parametrize(
    "cols, item", [(256, 64), (512, 128), (768, 128), (1024, 256), (4096, 256), (77, 64), (None, 256)]
)
def test_narrow_column_sums_take_narrower_items(cols, item):
    """A column sum's items are 256 columns wide, narrower (down to 64) where that leaves fewer than 4 items: a
    bias gradient's 256 columns are 4 items for the threads, not one."""
    from irc.targets.cpu.codegen.tiles import reduction_cols

    assert reduction_cols(cols) == item


def test_a_bias_gradient_column_sum_splits_over_the_threads():
    from irc.targets.cpu.runtime import steps

    x = randn(300, 256)
    program, _ = build(lambda x: x.sum(0), x, cache=False)
    (ln,) = program.compiled.launches
    assert steps.counter(ln.plan, ln.step.syms) == (4, 300 * 64)  # 4 items of 64 columns, all 300 rows
    torch.testing.assert_close(program([x])[0], x.sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cols", [3, 17, 40, 77, 300])
def test_column_reductions_take_wider_vectors_by_default(cols):
    """Reducing in lanes, a nest runs up to 4 native vectors per step (independent accumulators), no wider
    than its columns need; a row reduction too, as long as its row holds two of the wider vectors (its masked
    last vector costs a whole one). Both match eager (tails included)."""
    from irc.targets.cpu.codegen.tuning import LANES_REDUCING
    from irc.targets.cpu.runtime import jit

    native = jit.host().lanes(32)
    x = randn(29, cols)
    column = check(lambda x: x.sum(0) * 2, x)
    row = check(lambda x: x.sum(1), x)
    want = native * min(LANES_REDUCING, 1 << max(0, (-(-cols // native) - 1).bit_length()))
    assert [ln.plan["lanes"] for ln in column.compiled.launches] == [
        want if cols >= 4 else 1
    ]  # below 4 columns: scalars
    k = 1
    while k < LANES_REDUCING and 2 * k * native <= cols:
        k *= 2
    assert [ln.plan["lanes"] for ln in row.compiled.launches] == [native * k if cols >= 4 else 1]


def test_software_prefetch_only_where_a_step_streams_past_it(monkeypatch):
    """A streaming load prefetches PREFETCH bytes ahead where one step reads at least twice that contiguously (long
    rows, an item's chunk of columns), not in a column sum whose items read 256 columns a row: there the line
    fetched would be another item's."""
    from irc.targets.cpu.codegen import tuning

    monkeypatch.setattr(tuning, "PREFETCH_MIN_BYTES", 0)  # these 1 MB buffers stand for ones beyond the caches
    x = randn(64, 4096)
    streaming = check(lambda x: (x * 3).relu().sum(-1), x)
    column = check(lambda x: x.sum(0), x)
    short_rows = check(lambda x: x.sum(-1), randn(64, 300))
    assert tuning.PREFETCH and "llvm.prefetch" in streaming.compiled.llvm_ir
    assert "llvm.prefetch" not in column.compiled.llvm_ir and "llvm.prefetch" not in short_rows.compiled.llvm_ir


def test_no_software_prefetch_for_a_buffer_the_caches_hold(monkeypatch):
    """A static buffer of at most PREFETCH_MIN_BYTES is read from the caches, where a prefetch only costs a load slot:
    a 1 MB row sum has none at the default (32 MB); with the bound at 512 KB the same sum prefetches, and a 256 KB
    one still does not."""
    from irc.targets.cpu.codegen import tuning

    assert "llvm.prefetch" not in check(lambda x: x.sum(-1), randn(64, 4096)).compiled.llvm_ir
    monkeypatch.setattr(tuning, "PREFETCH_MIN_BYTES", 512 << 10)
    assert "llvm.prefetch" in check(lambda x: x.sum(-1), randn(64, 4096)).compiled.llvm_ir
    assert "llvm.prefetch" not in check(lambda x: x.sum(-1), randn(16, 4096)).compiled.llvm_ir


def test_a_column_reduction_with_math_prefetches_the_rows_ahead():
    """A column reduction walks its items' columns down the rows, a new page each step, which the hardware does not
    prefetch. Where its body runs math functions (gelu's backward with its bias gradient, one kernel) each load and
    each store of a full output also prefetches the row ROWS_AHEAD steps ahead (1.5x on 2048x1024), at any buffer
    size; a plain column sum keeps none, and neither does a row reduction with math."""
    from irc.targets.cpu.codegen import tuning

    g, x = randn(64, 96), randn(64, 96)
    gelu_grad = lambda g, x: torch.ops.aten.gelu_backward(g, x)  # noqa: E731
    fused = check(lambda g, x: (gelu_grad(g, x), gelu_grad(g, x).sum(0)), g, x)
    (launch,) = fused.compiled.launches
    lines = launch.plan["lanes"] * 4 // tuning.CACHE_LINE
    assert (
        fused.compiled.llvm_ir.count('call void @"llvm.prefetch.p0"') == 3 * lines
    )  # two loads and the gradient's store
    assert "llvm.prefetch" not in check(lambda x: x.sum(0), x).compiled.llvm_ir
    assert "llvm.prefetch" not in check(lambda x: x.exp().sum(-1), x).compiled.llvm_ir


def test_a_wide_step_prefetches_every_line_it_reads(monkeypatch):
    """A row sum over 4096 columns steps 4 native vectors at a time: one prefetch per 64-byte line of the step,
    PREFETCH, PREFETCH + 64, ... bytes ahead (one prefetch for four lines left three fetched late: 0.78x -> 0.57x
    eager on 4096x4096)."""
    import re

    from irc.targets.cpu.codegen import tuning
    from irc.targets.cpu.codegen.tuning import LANES_REDUCING
    from irc.targets.cpu.runtime import jit

    monkeypatch.setattr(tuning, "PREFETCH_MIN_BYTES", 0)  # a 1 MB buffer standing for a 64 MB one

    row = check(lambda x: x.sum(-1), randn(64, 4096))
    (launch,) = row.compiled.launches
    lines = launch.plan["lanes"] * 4 // tuning.CACHE_LINE
    assert launch.plan["lanes"] == LANES_REDUCING * jit.host().lanes(32) and lines > 1
    ahead = sorted(int(m) for m in re.findall(r"getelementptr i8, i8\* %\S+, i64 (\d+)", row.compiled.llvm_ir))
    assert ahead == [tuning.PREFETCH + tuning.CACHE_LINE * j for j in range(lines)]


def test_rows_of_several_passes_prefetch_the_rows_ahead_in_the_first():
    """softmax then layer_norm: each row is read from memory in the first of its passes and from L1 in the four
    others, and a row of a page or less is where the hardware prefetchers start over. The first pass's load also
    prefetches the row ITEMS_AHEAD items ahead (one prefetch per line of its step), at any buffer size; the later
    passes and a one-pass row sum of a cached buffer prefetch nothing."""
    from irc.targets.cpu.codegen import tuning

    x = randn(64, 1024)
    rows = check(lambda x: F.layer_norm(torch.softmax(x, -1), (1024,)), x)
    (launch,) = rows.compiled.launches
    lines = launch.plan["lanes"] * 4 // tuning.CACHE_LINE
    assert rows.compiled.llvm_ir.count('call void @"llvm.prefetch.p0"') == lines
    assert "llvm.prefetch" not in check(lambda x: x.sum(-1), x).compiled.llvm_ir


def test_the_first_pass_prefetches_the_gathered_rows_ahead():
    """layer_norm of embedding rows (BERT's first kernel): each row comes from wherever its index points, so the
    first pass prefetches the row ITEMS_AHEAD items ahead from the index loaded there (the item clamped into its
    dim: the index's load stays in its buffer), one prefetch per line of its step. Eager's numbers, the last
    items (whose items ahead are past the end) included."""
    from irc.targets.cpu.codegen import tuning

    ids = torch.randint(0, 1000, (3, 37), generator=torch.Generator().manual_seed(0))
    table = randn(1000, 256)
    rows = check(lambda i, t: F.layer_norm(F.embedding(i, t), (256,)), ids, table)
    (launch,) = rows.compiled.launches
    lines = launch.plan["lanes"] * 4 // tuning.CACHE_LINE
    assert rows.compiled.llvm_ir.count('call void @"llvm.prefetch.p0"') == lines


def _autotuned_transpose(monkeypatch):
    """The transposed copy compiled under max-autotune with every variant qualifying; its report, checked against eager."""
    from irc.targets.cpu.runtime import autotune

    monkeypatch.setattr(autotune, "MARGIN", 1e9)
    monkeypatch.setattr(autotune, "SMALL_S", 0.0)
    fn, make = TILED["transpose"]
    (x,) = make()
    start = report.mark()
    f = torch.compile(fn, backend=irc.backend, options={"mode": "max-autotune", "cache": False, "strict": True})
    torch.testing.assert_close(f(x), fn(x))
    (g,) = report.reports_since(start).graphs
    return g


def test_max_autotune_measures_tiles_and_keeps_what_it_chose(monkeypatch):
    """With every variant qualifying, the transposed copy takes a tile (the second round ran) and still matches."""
    from irc.targets.cpu.runtime import autotune

    g = _autotuned_transpose(monkeypatch)
    (note,) = [n for n in g.mode_notes if " tiles, " in n]  # the second round's choice, with every candidate's median
    assert all(f"{t.rows}x{t.cols} " in note for t in autotune.TILES) and "default " in note, note


@pytest.mark.parametrize("faster", ["default", "tuned"])
def test_max_autotune_keeps_the_tuned_build_only_when_the_whole_call_is_faster(monkeypatch, faster):
    """A mode is never slower than the default: variants chosen launch by launch are kept only when the tuned build
    beats the default build as a whole call (here the whole-call medians are given: `faster` wins)."""
    from irc.targets import timing

    real = timing.measure

    def measure(calls, **kw):
        if set(calls) == {"default", "tuned"}:
            return {label: 1.0 if label == faster else 2.0 for label in calls}
        return real(calls, **kw)

    monkeypatch.setattr(timing, "measure", measure)  # whole calls are timed by targets/timing.py
    g = _autotuned_transpose(monkeypatch)
    (note,) = [n for n in g.mode_notes if n.startswith("whole program: ")]
    want = "the default build kept" if faster == "default" else "the tuned build"
    assert note.startswith(f"whole program: {want} (median us per call: default ") and note.endswith("(measured)"), note


def test_max_autotune_chooses_generated_or_library_matmul_once(tmp_path, monkeypatch):
    """A graph of small products is built both ways and measured whole; the choice is kept in the disk cache,
    so a second compile builds only the chosen program."""
    from irc import cache
    from irc.targets.cpu.target import CpuTarget

    calls = []
    real = CpuTarget.choose
    monkeypatch.setattr(
        CpuTarget, "choose", lambda self, runs, args: calls.append(sorted(runs)) or real(self, runs, args)
    )
    fn, make = MATMULS["linear-relu"]
    inputs = make()
    cache.set_dir(tmp_path)
    notes = []
    try:
        for _ in range(2):
            torch._dynamo.reset()
            start = report.mark()
            f = torch.compile(fn, backend=irc.backend, options={"mode": "max-autotune", "strict": True})
            torch.testing.assert_close(f(*inputs), fn(*inputs), **tolerance(torch.float32))
            (g,) = report.reports_since(start).graphs
            notes.append(next(n for n in g.mode_notes if n.startswith("matmul: ")))
    finally:
        cache.set_dir(None)
    assert [c for c in calls if c != ["default", "tuned"]] == [["extern", "loops"]], calls  # (and tuned builds, whole)
    assert notes[0].endswith("(measured)") and notes[1].endswith("(from the disk cache)"), notes
    assert notes[0].removesuffix(" (measured)") == notes[1].removesuffix(" (from the disk cache)")


def test_max_autotune_leaves_large_products_to_the_library():
    from irc.targets.cpu.runtime.autotune import SMALL_MACS

    fn, _ = MATMULS["mm"]
    a, b = randn(64, 64), randn(64, 2 * SMALL_MACS // (64 * 64))  # twice the size measured both ways
    start = report.mark()
    torch.testing.assert_close(
        torch.compile(fn, backend=irc.backend, options={"mode": "max-autotune", "strict": True})(a, b), a @ b
    )
    (g,) = report.reports_since(start).graphs
    assert not any(n.startswith("matmul: ") for n in g.mode_notes) and "tn.mm" in g.externs
