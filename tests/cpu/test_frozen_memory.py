"""Frozen weights are used in place: no library-packed second copy unless options={"prepack": True} asks for one,
and max-autotune measures its builds on the real weights (targets/timing.random_inputs), not on random copies."""

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from irc import report
from irc.targets.args import ArgSpec
from irc.targets.cpu.libs import externs
from irc.targets.timing import random_inputs
from tests.conftest import compile_irc

TOL = dict(rtol=1e-4, atol=1e-4)


def _reorders(model, x, **options) -> tuple[int, dict]:
    """(oneDNN weight reorders in two calls of the compiled model, the graph's extern paths)."""
    start = report.mark()
    f = compile_irc(model, **options)
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.testing.assert_close(f(x), model(x), **TOL)
        torch.testing.assert_close(f(x + 1), model(x + 1), **TOL)
    (g,) = report.reports_since(start).graphs
    return sum(e.name == "mkldnn::_reorder_linear_weight" for e in prof.events()), g.extern_paths


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()


def test_a_frozen_graph_keeps_no_packed_copy_of_its_weights_by_default():
    model, x = _mlp(), torch.randn(64, 256)
    reorders, paths = _reorders(model, x)
    assert reorders == 0 and "mkldnn_packed" not in paths.values(), paths
    assert any("tn.addmm" in p or "tn.mm" in p for p in paths), paths  # the products are library calls


@pytest.mark.skipif(not externs.onednn_available(torch.float32), reason="torch is built without oneDNN: nothing packs")
def test_prepack_packs_each_frozen_weight():
    model, x = _mlp(), torch.randn(64, 256)
    reorders, paths = _reorders(model, x, prepack=True)
    assert reorders > 0 and list(paths.values()).count("mkldnn_packed") == 2, (reorders, paths)


@pytest.mark.parametrize("prepack", [None, True])
def test_a_bf16_linear_layer_keeps_no_packed_copy_unless_asked(prepack):
    """Under bf16 autocast too a frozen linear layer's weight is not packed by default: the packed bf16 copies of a
    cast-whole BERT-base are 165 MB more than the model holds (as much as inductor with freezing on, where inductor's
    default holds none); options={"prepack": True} packs them where a bf16 product takes oneDNN at all
    (externs.onednn_bf16: mlp-b32 ran 1.4x faster so on the AVX512-BF16 EPYC, or with its gelu as oneDNN's post-op
    wherever oneDNN has bf16 kernels), and where it stays on torch.addmm (MKL's own branch, as on Intel's CPUs)
    there is nothing to pack. The result is judged against float64 beside eager's."""
    import copy

    from tests.numeric.low_precision import assert_low_precision_close

    model, x = _mlp(), torch.randn(64, 256)
    start = report.mark()
    f = compile_irc(copy.deepcopy(model), **({"prepack": prepack} if prepack else {}))
    with torch.no_grad():
        want64 = copy.deepcopy(model).double()(x.double())
        with torch.autocast("cpu", dtype=torch.bfloat16):
            got, eager = f(x), model(x)
    (g,) = report.reports_since(start).graphs
    up_on_onednn = externs.onednn_bf16(torch.bfloat16) or "bfloat16" in externs.narrow_products()  # its gelu: oneDNN's
    packed = (externs.onednn_bf16(torch.bfloat16) + up_on_onednn) if prepack else 0
    assert list(g.extern_paths.values()).count("mkldnn_packed") == packed, g.extern_paths
    assert_low_precision_close(got, eager, want64)


def test_measuring_reads_real_weights_and_shares_one_random_buffer():
    """A spec with its real tensor gets that tensor (detached); the other read-only tensors of a dtype are views of
    one buffer; a tensor the graph writes gets its own; integers are zeros, and sizes and strides are the specs'."""
    w = torch.nn.Parameter(torch.randn(7, 3))
    specs = [
        ArgSpec.of(torch.empty(5, 3), "x"),
        ArgSpec("w", "tensor", torch.float32, (7, 3), (3, 1), stable=True, example=w),
        ArgSpec.of(torch.empty(4, 6).t(), "xt"),
        ArgSpec("state", "tensor", torch.float32, (2, 2), (2, 1), written_from=1),
        ArgSpec.of(torch.empty(3, dtype=torch.int64), "idx"),
        ArgSpec.of(11, "n"),
    ]
    x, wr, xt, state, idx, n = random_inputs(specs)
    assert wr.data_ptr() == w.data_ptr() and not wr.requires_grad
    assert x.untyped_storage().data_ptr() == xt.untyped_storage().data_ptr()
    assert state.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert xt.shape == (6, 4) and xt.stride() == (1, 6) and x.std() > 0.1 and state.std() > 0.1
    assert idx.dtype == torch.int64 and not idx.any() and n == 11


def test_frozen_parameters_are_the_specs_examples():
    """graph_args gives each frozen parameter and constant its real tensor, and no other argument one."""
    from irc.targets.args import graph_args

    class P:
        def __init__(self, name, val):
            self.name, self.meta = name, {"val": val}

    w, c = torch.randn(3, 3), torch.randn(2)
    specs = graph_args([P("x", torch.empty(2, 3)), P("w", torch.empty(3, 3))], [c], {1: w})
    assert [s.example is not None for s in specs] == [False, True, True] and specs[1].example is w
    assert [s.stable for s in specs] == [False, True, True]


def test_max_autotune_measures_launches_on_the_calls_own_context(monkeypatch):
    """A context of its own for measuring would touch a second arena, kept in the process's peak memory: measuring
    makes no context, it borrows the pool's. (Where the tuned build wins, the executor is rebuilt and makes its new
    pooled context then, after measuring: which build wins depends on the machine's timing, so that is not counted.)"""
    from irc.targets.cpu.runtime import autotune
    from irc.targets.cpu.runtime.executor import Executor

    made, measured, measuring = [], [], [False]
    context, measure, measure_on = Executor.context, autotune._measure, autotune._measure_on

    def counted_context(self):
        cx = context(self)
        made.append((self, cx, measuring[0]))
        return cx

    def flagged_measure(*args):
        measuring[0] = True
        try:
            return measure(*args)
        finally:
            measuring[0] = False

    monkeypatch.setattr(Executor, "context", counted_context)
    monkeypatch.setattr(autotune, "_measure", flagged_measure)
    monkeypatch.setattr(
        autotune, "_measure_on", lambda c, ex, cx, u: measured.append((ex, cx)) or measure_on(c, ex, cx, u)
    )
    model, x = _mlp(), torch.randn(64, 256)
    f = compile_irc(model, mode="max-autotune", cache=False)
    with torch.no_grad():
        torch.testing.assert_close(f(x), model(x), **TOL)
    assert measured, "max-autotune measured no launch"
    assert not [m for m in made if m[2]], "measuring made a context of its own"
    for executor, cx in measured:  # the pool's context, made when the executor was built
        assert any(ex is executor and c is cx for ex, c, _ in made)


def test_max_autotune_frees_its_variants_before_the_first_call(monkeypatch):
    """The variant modules measured and dropped are garbage in cycles (IR, contexts): max-autotune collects them and
    gives the C heap's free pages back after each phase, so they are not in the first call's peak."""
    import weakref

    from irc.targets.cpu.runtime import alloc, autotune

    alive, released = [], []
    variants = autotune._lanes_variants

    def tracked(compiled, use_cache):
        libs = variants(compiled, use_cache)
        for lib in libs.values():
            alive.append(weakref.ref(lib))
        return libs

    monkeypatch.setattr(autotune, "_lanes_variants", tracked)
    release = alloc.release_freed
    monkeypatch.setattr(alloc, "release_freed", lambda: released.append([r() is None for r in alive]) or release())
    model, x = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.Softmax(-1)).eval(), torch.randn(64, 256)
    f = compile_irc(model, mode="max-autotune", cache=False)
    with torch.no_grad():
        torch.testing.assert_close(f(x), model(x), **TOL)
    assert alive, "max-autotune compiled no variant"
    assert released, "max-autotune released nothing"
    assert all(r() is None for r in alive), "a variant module outlived the tuning"


def test_release_freed_collects_cyclic_garbage():
    import gc
    import weakref

    from irc.targets.cpu.runtime import alloc

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    gc.disable()
    try:
        del a, b
        assert ref() is not None  # a cycle: reference counting alone keeps it
        alloc.release_freed()
        assert ref() is None
    finally:
        gc.enable()
