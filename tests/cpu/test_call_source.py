"""A graph's call as one generated Python function (targets/cpu/runtime/call_source.py): calls whose arguments pass
its condition run it, with eager's numbers; any other call runs the executor's generic path, which accepts
it or raises its error."""

import math

import pytest
import torch

from irc.targets.cpu.runtime.executor import Executor, InputMismatch

from .programs import build, tolerance


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed + sum(shape)))


def attention_pool(x, w):
    scores = (x * w).sum(-1) / math.sqrt(x.shape[-1])
    return (torch.softmax(scores, dim=1).unsqueeze(-1) * x).sum(1) + x.mean(1) * 0.5


class Paths:
    """Counts the calls that took the generic path."""

    def __init__(self, monkeypatch):
        self.generic = 0
        run = Executor._run

        def counted(executor, cx, args):
            self.generic += 1
            return run(executor, cx, args)

        monkeypatch.setattr(Executor, "_run", counted)


def agree(program, consts, fn, *args):
    got, want = program([*args, *consts]), fn(*args)
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w, **tolerance(w.dtype))


def test_dynamic_graph_calls_run_the_generated_function_at_every_size(monkeypatch):
    program, consts = build(attention_pool, randn(8, 48, 32), randn(32), dynamic=True, cache=False)
    assert "def call(args)" in program.call_source
    paths = Paths(monkeypatch)
    for seq in (48, 7, 17, 2, 131):  # primes, and a length past one vector of columns
        agree(program, consts, attention_pool, randn(8, seq, 32, seed=seq), randn(32))
    assert paths.generic == 0


def test_dynamic_buffers_small_and_large_are_allocated_in_the_generated_call(monkeypatch):
    from irc.targets.cpu.runtime import alloc

    fn = lambda x: torch.softmax(x * 2, -1) + 1  # noqa: E731 - an intermediate of the input's size
    program, consts = build(fn, randn(6, 10), dynamic=True, cache=False)
    assert "empty_small(" in program.call_source and "empty(" in program.call_source
    paths = Paths(monkeypatch)
    for rows in (6, 3, alloc.HUGE_MIN // (4 * 257) + 1):  # the last past alloc.HUGE_MIN: alloc.empty's pooled pages
        agree(program, consts, fn, randn(rows, 257))
    assert paths.generic == 0


def test_intermediates_come_from_the_contexts_scratch(monkeypatch):
    """attention_pool's two intermediates (scores, weights) are only its kernels' business: a call takes them from
    its context's scratch, grown to the largest size called so far and kept, not allocated per call. Results stay
    the caller's own (never scratch), and every size, larger and smaller, gets eager's numbers."""
    from irc.targets.cpu.runtime import call_source

    program, consts = build(attention_pool, randn(8, 48, 32), randn(32), dynamic=True, cache=False)
    assert len(call_source.scratch_roots(program.compiled)) == 2
    paths = Paths(monkeypatch)
    agree(program, consts, attention_pool, randn(8, 131, 32), randn(32))
    (cx,) = program._free
    kept = {r: t.data_ptr() for r, t in cx.scratch.items()}
    assert len(kept) == 2 and all(cx.room[r] >= 8 * 131 * 4 for r in kept)
    outs = []
    for seq in (7, 48, 131, 2):
        (out,) = program([randn(8, seq, 32, seed=seq), randn(32), *consts])
        torch.testing.assert_close(out, attention_pool(randn(8, seq, 32, seed=seq), randn(32)), **tolerance(out.dtype))
        outs.append(out)
    assert {r: t.data_ptr() for r, t in cx.scratch.items()} == kept  # no call needed more: nothing allocated again
    assert not {o.data_ptr() for o in outs} & set(kept.values()) and len({o.data_ptr() for o in outs}) == len(outs)
    assert paths.generic == 0


def test_derived_sizes_are_computed_in_the_generated_call(monkeypatch):
    fn = lambda x: (x.reshape(x.shape[0] * x.shape[1], x.shape[2]) * 2).sum(0)  # noqa: E731
    program, consts = build(fn, randn(6, 10, 5), dynamic=True, cache=False)
    assert any(st.kind == "derive" for st in program.compiled.g.steps), (
        "the reshape's product of two sizes is a derived cell"
    )
    paths = Paths(monkeypatch)
    for shape in ((6, 10, 5), (3, 7, 11), (13, 2, 3)):
        agree(program, consts, fn, randn(*shape))
    assert paths.generic == 0


def test_static_graph_runs_the_generated_function_and_non_contiguous_inputs_the_generic_path(monkeypatch):
    fn = lambda x, y: torch.tanh(x @ y).sum(-1)  # noqa: E731
    x, y = randn(64, 33), randn(33, 17)
    program, consts = build(fn, x, y, cache=False)
    paths = Paths(monkeypatch)
    agree(program, consts, fn, x, y)
    assert paths.generic == 0
    assert "tensor_of" not in program.call_source  # the product reads the arguments and an arena view made once
    with pytest.raises(InputMismatch, match="strides"):  # the generic path's own error, through the generated call
        program([randn(33, 64).t(), y, *consts])
    assert paths.generic == 1


def test_a_static_view_of_an_argument_is_made_in_the_generated_call_from_the_arguments_own_offset(monkeypatch):
    fn = lambda x, w: x @ w.t()  # noqa: E731 - the product reads a transposed view of the argument w
    x, w = randn(32, 64), randn(10, 64)
    program, consts = build(fn, x, w, cache=False)
    assert "tensor_of" not in program.call_source and ".as_strided(" in program.call_source
    paths = Paths(monkeypatch)
    agree(program, consts, fn, x, w)
    rows = randn(13, 64)
    agree(program, consts, fn, x, rows[3:13])  # the same sizes and strides, a storage offset of 3 rows
    assert paths.generic == 0


def test_size_one_dims_take_any_stride_in_the_generated_call(monkeypatch):
    fn = lambda x: torch.relu(x) + 1  # noqa: E731
    program, consts = build(fn, randn(5, 1, 7), dynamic=True, cache=False)
    paths = Paths(monkeypatch)
    odd = torch.empty_strided((5, 1, 7), (7, 99, 1)).copy_(randn(5, 1, 7))  # the size-1 dim's stride addresses nothing
    agree(program, consts, fn, odd)
    agree(program, consts, fn, randn(4, 1, 9))
    assert paths.generic == 0


def test_a_symbol_first_seen_as_the_stride_of_a_size_one_dim_takes_the_generic_path(monkeypatch):
    fn = lambda x: x.sum(0) * 2  # noqa: E731
    program, consts = build(fn, randn(9, 4)[:, :3], dynamic=True, cache=False)  # stride 4: a symbol of its own
    paths = Paths(monkeypatch)
    agree(program, consts, fn, randn(7, 6)[:, :5])
    assert paths.generic == 0
    agree(program, consts, fn, randn(1, 6)[:, :5])  # the row stride addresses nothing: no value for its symbol
    assert paths.generic == 1


def test_wrong_dtype_and_arity_raise_the_executors_errors():
    program, consts = build(lambda x: x * 3, randn(4, 6), dynamic=True, cache=False)
    with pytest.raises(InputMismatch, match="dtype torch.float64"):
        program([randn(4, 6).double(), *consts])
    with pytest.raises(InputMismatch, match="arguments"):
        program([randn(4, 6), randn(4, 6), *consts])


def test_calls_from_several_threads_each_get_their_own_context():
    from concurrent.futures import ThreadPoolExecutor

    program, consts = build(attention_pool, randn(8, 48, 32), randn(32), dynamic=True, cache=False)
    inputs = [(randn(8, n, 32, seed=n), randn(32, seed=n)) for n in (3, 48, 29, 64) * 4]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda a: program([*a, *consts])[0], inputs))
    for (x, w), got in zip(inputs, results):
        torch.testing.assert_close(got, attention_pool(x, w), **tolerance(torch.float32))


def test_extern_results_bind_their_sizes_in_the_generated_call(monkeypatch):
    fn = lambda x: (torch.sort(x, -1).values * 2).sum(0)  # noqa: E731
    program, consts = build(fn, randn(6, 10), dynamic=True, cache=False)
    assert any(st.kind == "extern" and st.results for st in program.compiled.g.steps), (
        "sort's results are fresh tensors"
    )
    paths = Paths(monkeypatch)
    for shape in ((6, 10), (5, 3), (11, 17)):
        agree(program, consts, fn, randn(*shape))
    assert paths.generic == 0


@pytest.mark.parametrize("case", ["returned reshape", "extern operand"])
def test_a_static_view_of_a_fresh_buffer_is_made_in_the_generated_call(monkeypatch, case):
    """Static views of a fresh buffer are made with as_strided in the generated call, not the generic path's
    tensor_of: a matmul's result returned reshaped (and read by a kernel too), and a returned result that a product
    also reads transposed (its operand a view of the result's own buffer)."""
    fn, x, y, view = {
        "returned reshape": (
            lambda x, y: ((m := x @ y).reshape(-1), m.tanh()),
            randn(6, 5),
            randn(5, 4),
            "(24,), (1,), 0",
        ),
        "extern operand": (lambda x, w: ((e := x.exp()), e.t() @ w), randn(6, 5), randn(6, 4), "(5, 6), (1, 5), 0"),
    }[case]
    program, consts = build(fn, x, y, cache=False)
    paths = Paths(monkeypatch)
    agree(program, consts, fn, x, y)
    assert paths.generic == 0
    assert "tensor_of" not in program.call_source and f".as_strided({view})" in program.call_source
