"""Externs: every library path against eager torch (float32 tolerances), and the path rule."""

import pytest
import torch
import torch.nn.functional as F

from irc import cache
from irc.targets import timing
from irc.targets.cpu.libs import externs
from irc.targets.cpu.libs.measured import Measured

TOL = dict(rtol=1e-4, atol=1e-4)
torch.manual_seed(0)


def _linear_paths():
    return externs.LinearKernel(torch.randn(4, 4), constant=True).paths()


@pytest.mark.parametrize("path", _linear_paths())
@pytest.mark.parametrize("epilogue", externs.EPILOGUES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xshape, n", [((7, 33), 65), ((2, 5, 64), 48), ((32, 256), 128)])
def test_linear_paths_match_eager(path, epilogue, bias, xshape, n):
    x, w = torch.randn(*xshape), torch.randn(n, xshape[-1])
    b = torch.randn(n) if bias else None
    got = externs.LinearKernel(w, b, epilogue, constant=True, path=path)(x)
    torch.testing.assert_close(got, externs.reference("linear", x, w, b, epilogue=epilogue), **TOL)


def test_packed_weight_serves_other_batch_sizes():
    w, b = torch.randn(96, 80), torch.randn(96)
    k = externs.LinearKernel(w, b, "relu", constant=True, path="mkldnn_packed")
    if "mkldnn_packed" not in k.paths():
        pytest.skip("no oneDNN")
    for m in (64, 1, 13, 300):
        x = torch.randn(m, 80)
        torch.testing.assert_close(k(x), F.relu(F.linear(x, w, b)), **TOL)


@pytest.mark.parametrize("path", ["aten", "mkldnn"])
def test_mm_addmm(path):
    a, b, c = torch.randn(9, 31), torch.randn(31, 17), torch.randn(17)
    torch.testing.assert_close(externs.mm(a, b, path=path), a @ b, **TOL)
    torch.testing.assert_close(externs.addmm(c, a, b, path=path), torch.addmm(c, a, b), **TOL)
    torch.testing.assert_close(externs.addmm(c, a, b, epilogue="gelu", path=path), F.gelu(torch.addmm(c, a, b)), **TOL)
    c2 = torch.randn(9, 17)
    torch.testing.assert_close(externs.addmm(c2, a, b, beta=0.5, alpha=2.0), torch.addmm(c2, a, b, beta=0.5, alpha=2.0))


def test_bmm_with_scale_and_out():
    q, k = torch.randn(6, 10, 16), torch.randn(6, 16, 12)
    torch.testing.assert_close(externs.bmm(q, k), q @ k, **TOL)
    out = torch.empty(6, 10, 12)
    y = externs.bmm(q, k, alpha=0.25, out=out)
    assert y.data_ptr() == out.data_ptr()
    torch.testing.assert_close(y, (q @ k) * 0.25, **TOL)


def _conv_paths():
    return externs.ConvKernel(torch.randn(2, 2, 1, 1)).paths()


CONVS = [  # (x shape, w shape, stride, padding, dilation, groups)
    ((2, 8, 15, 13), (16, 8, 3, 3), 1, 1, 1, 1),
    ((1, 6, 20, 20), (12, 3, 3, 3), 2, 0, 1, 2),
    ((3, 16, 9, 9), (16, 1, 5, 5), 1, 2, 1, 16),
    ((2, 4, 12, 12), (8, 4, 3, 3), 1, 2, 2, 1),
    ((4, 32, 7, 7), (8, 32, 1, 1), 1, 0, 1, 1),
]


@pytest.mark.parametrize("path", _conv_paths())
@pytest.mark.parametrize("epilogue", [None, "relu", "gelu"])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "x".join(map(str, c[0])))
def test_conv_paths_match_eager(path, epilogue, channels_last, conv):
    xs, ws, stride, padding, dilation, groups = conv
    x, w, b = torch.randn(*xs), torch.randn(*ws), torch.randn(ws[0])
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    k = externs.ConvKernel(w, b, stride, padding, dilation, groups, epilogue, path=path)
    want = externs.reference("conv2d", x, w, b, stride, padding, dilation, groups, epilogue=epilogue)
    torch.testing.assert_close(k(x), want, **TOL)
    torch.testing.assert_close(k(x), want, **TOL)  # second call: the cached packed weight


def _rule_problems():
    """(kernel, input) pairs covering each branch of the rule: dtypes, constant or changing weights, layouts."""
    g = torch.Generator().manual_seed(0)
    out = []
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        w, b, x = (torch.randn(*s, generator=g).to(dt) for s in ((96, 80), (96,), (64, 80)))
        out += [(externs.LinearKernel(w, b, "relu", constant=c), x) for c in (True, False)]
        w, b, x = (torch.randn(*s, generator=g).to(dt) for s in ((16, 8, 3, 3), (16,), (2, 8, 15, 13)))
        for xin in (x, x.contiguous(memory_format=torch.channels_last)):
            out += [(externs.ConvKernel(w, b, 1, 1, epilogue="relu", constant=c), xin) for c in (True, False)]
    return out


def test_path_is_a_rule_not_a_timing(monkeypatch):
    """Issue 18: the paths round differently, so which one runs must not depend on how fast each was on one
    run. Timings in either order (as measure would report them) leave every path and every bit unchanged."""
    monkeypatch.delenv("IRC_EXTERN_PATH", raising=False)
    runs = []
    for order in (1, -1):
        fake = lambda cands, order=order, **kw: {p: order * i for i, p in enumerate(cands)}  # noqa: E731
        monkeypatch.setattr(timing, "measure", fake)
        runs.append([(k.choose(x), k(x)) for k, x in _rule_problems()])
    for (p1, y1), (p2, y2) in zip(*runs):
        assert p1 == p2 and torch.equal(y1, y2)
    f32_packed = externs.onednn_available(torch.float32)
    plain = "mkldnn" if f32_packed and externs.onednn_outruns_mkl() else "aten"  # a property of the machine
    bf16 = externs.onednn_bf16(torch.bfloat16)  # bf16 takes float32's oneDNN paths where oneDNN outruns MKL
    want = [("mkldnn_packed" if f32_packed else "aten", plain), ("mkldnn_packed", "mkldnn") if bf16 else ("aten",) * 2]
    want.append(("aten", "aten"))  # linear, per dtype: float16 stays eager's call
    got = [(runs[0][6 * i][0], runs[0][6 * i + 1][0]) for i in range(3)]
    assert got == want


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_conv_paths_on_channels_last_input_equal_eager_bit_for_bit(dtype):
    """The rule takes the prepacked path for a channels-last input because there every path rounds as eager
    does; an NCHW input keeps eager's own call."""
    g = torch.Generator().manual_seed(0)
    for xs, ws, stride, padding, dilation, groups in CONVS:
        x, w, b = (torch.randn(*s, generator=g).to(dtype) for s in (xs, ws, ws[:1]))
        x = x.contiguous(memory_format=torch.channels_last)
        k = externs.ConvKernel(w, b, stride, padding, dilation, groups, "relu")
        want = externs.reference("conv2d", x, w, b, stride, padding, dilation, groups, epilogue="relu")
        for path in k.paths():
            assert torch.equal(k.run(x, path), want), (path, xs, ws)
    assert k.choose(x.contiguous()) == "aten"


_F32_SCRIPT = """
import hashlib, sys, torch, torch.nn.functional as F
import irc
from irc.targets import timing
order = int(sys.argv[1])  # this process's measured timings: one order or the reverse
timing.measure = lambda cands, **kw: {p: order * i for i, p in enumerate(cands)}
g = torch.Generator().manual_seed(0)
x, w1, b1, w2 = (torch.randn(*s, generator=g) for s in ((64, 256), (512, 256), (512,), (128, 512)))
xc, wc = torch.randn(2, 16, 20, 20, generator=g), torch.randn(32, 16, 3, 3, generator=g)
fn = lambda x, xc: (F.linear(F.linear(x, w1, b1).relu(), w2), F.conv2d(xc, wc, padding=1).relu())
with torch.no_grad():
    ys = torch.compile(fn, backend=irc.backend, options={"strict": True})(x, xc.contiguous(memory_format=torch.channels_last))
print(hashlib.sha256(b"".join(y.contiguous().numpy().tobytes() for y in ys)).hexdigest())
"""


def test_f32_results_identical_across_processes_with_different_timings(tmp_path):
    """Two fresh processes (own caches), one seeing every timing reversed: the same float32 bits."""
    import os
    import subprocess
    import sys

    digests = []
    for order in (1, -1):
        env = {**os.environ, "IRC_CACHE_DIR": str(tmp_path / str(order))}
        env.pop("IRC_EXTERN_PATH", None)
        r = subprocess.run(
            [sys.executable, "-c", _F32_SCRIPT, str(order)], env=env, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr[-2000:]
        digests.append(r.stdout.split()[-1])
    assert digests[0] == digests[1]


def test_forced_path(monkeypatch):
    monkeypatch.setenv("IRC_EXTERN_PATH", "aten")
    assert externs.LinearKernel(torch.randn(8, 8)).choose(torch.randn(2, 8)) == "aten"


def test_weights_that_need_grad_use_aten():
    w = torch.randn(8, 8, requires_grad=True)
    assert externs.LinearKernel(w).paths() == ("aten",)
    with torch.no_grad():
        assert len(externs.LinearKernel(w).paths()) > 1 or not externs.onednn_available()


@pytest.mark.parametrize("m,k,n", [(3, 0, 4), (0, 5, 4), (3, 5, 0)])
def test_empty_matrix_products_match_eager(m, k, n):
    """An empty dimension has nothing to tune: the choice must not divide by it (found by the OpInfo sweep)."""
    a, b, bias = torch.randn(m, k), torch.randn(k, n), torch.randn(n)
    torch.testing.assert_close(externs.mm(a, b), a @ b)
    torch.testing.assert_close(externs.addmm(bias, a, b), torch.addmm(bias, a, b))


class _Layer(torch.nn.Module):
    """x @ w: the parameter itself is the product's operand (nothing to fold), 2*64*256*512 flops for a 64-row x:
    above the small-product cut."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(256, 512))

    def forward(self, x):
        return (x @ self.w).relu()


def test_graph_weight_prepacked_once_and_never_stale(monkeypatch):
    """A matmul whose weight is a parameter of an inference graph (a stable argument), with option prepack, is
    prepacked once for oneDNN and reused while the weight is unchanged; an in-place update (an optimizer step) is seen, and the
    weight is not packed again."""
    from tests.conftest import compile_irc

    if not externs.onednn_available(torch.float32):
        pytest.skip("oneDNN is not available in this torch build")
    monkeypatch.setenv("IRC_EXTERN_PATH", "mkldnn_packed")
    packs, runs = [], []  # reorders of a weight, runs of the packed path
    real = externs.LinearKernel.packed

    def packed(self, m):
        runs.append(m)
        if self._packed is None:
            packs.append(m)
        return real(self, m)

    monkeypatch.setattr(externs.LinearKernel, "packed", packed)
    layer, x = _Layer(), torch.randn(64, 256)
    f = compile_irc(layer, prepack=True)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(f(x), layer(x), **TOL)
        assert len(runs) == 2 and len(packs) == 1  # packed once, the packed weight reused by the second call
        layer.w.mul_(-0.5)
        torch.testing.assert_close(f(x), layer(x), **TOL)
        layer.w.add_(1.0)
        torch.testing.assert_close(f(x), layer(x), **TOL)
    assert len(packs) == 1 and len(runs) == 2  # once changed, the weight is a plain operand: never packed again


def test_a_prepacked_product_is_taken_as_onednn_returns_it(tmp_path):
    """oneDNN's product has no out= form: a product by a constant weight prepacked (options prepack=True; a linear
    layer's weight is not packed by default) is taken as the fresh tensor it returns (at the mem stage an extern
    with a result and no out buffer) instead of being copied into a planned buffer, so a call makes no aten::copy_;
    so is a product by a weight that is a plain input where oneDNN's plain path outruns MKL
    (externs.onednn_outruns_mkl), else it writes its planned buffer through torch.mm's out=, as does every product
    in a torch built without oneDNN. All match eager."""
    from torch.profiler import ProfilerActivity, profile

    from tests.conftest import compile_irc

    onednn = externs.onednn_available(torch.float32)
    layer, x = _Layer(), torch.randn(64, 256)
    w = layer.w.detach().clone()  # a plain tensor: Dynamo takes a Parameter argument as a constant
    product = lambda x, w: (x @ w).relu()  # noqa: E731
    cases = {"constant": (layer, (x,)), "input": (product, (x, w))}
    with torch.no_grad():
        want = layer(x)
        for name, (fn, args) in cases.items():
            f = compile_irc(fn, dump_dir=str(tmp_path / name), prepack=name == "constant")
            torch.testing.assert_close(f(*args), want, **TOL)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                f(*args)
            (mem,) = (tmp_path / name).glob("*/*-mem.mlir")
            (line,) = [ln for ln in mem.read_text().splitlines() if "mem.extern" in ln]
            oned = onednn and (name == "constant" or externs.onednn_outruns_mkl())  # oneDNN's result, as it comes
            assert ("outs(:) -> memref<64x512xf32>" in line) == oned, line
            assert not any(e.name == "aten::copy_" for e in prof.events()), (name, [e.name for e in prof.events()])


def test_plain_graph_input_weight_is_not_prepacked(monkeypatch):
    """A weight passed as an ordinary input (not a parameter of an inference graph) may change every call:
    it is never prepacked (its product runs MKL's call, or oneDNN's plain path: externs.linear_rule)."""
    from tests.conftest import compile_irc

    packs = []
    real = externs.LinearKernel.packed
    monkeypatch.setattr(externs.LinearKernel, "packed", lambda self, m: packs.append(m) or real(self, m))
    fn = lambda x, w: F.linear(x, w).relu()  # noqa: E731
    f = compile_irc(fn)
    x, w = torch.randn(64, 256), torch.randn(512, 256)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(f(x, w), fn(x, w), **TOL)
    assert packs == []


def test_a_small_static_product_is_decided_once_not_per_call(monkeypatch):
    """A product of static sizes below the small-product cut takes torch.mm whatever its operands are: the extern
    decides that when it is prepared, so a call builds no kernel and looks up no path, and the compile report
    still names the path."""
    from irc import report
    from tests.conftest import compile_irc

    built = []
    real = externs.LinearKernel.__init__
    monkeypatch.setattr(externs.LinearKernel, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    fn = lambda x, w: x @ w.t()  # noqa: E731 - a transposed view of an input: 2*32*64*10 flops
    start = report.mark()
    f = compile_irc(fn)
    x, w = torch.randn(32, 64), torch.randn(10, 64)
    with torch.no_grad():
        for k in range(3):
            torch.testing.assert_close(f(x, w * k), fn(x, w * k), **TOL)
    assert built == []
    (g,) = report.reports_since(start).graphs
    assert g.extern_paths == {"tn.mm 32x64 @ 64x10 float32": "aten"}


@pytest.mark.parametrize("busy", [False, True], ids=["quiet", "busy"])
def test_choices_measured_on_a_busy_machine_stay_in_the_process(tmp_path, monkeypatch, busy):
    """cache.quiet(): a measurement taken while the load average is high is used, not kept on disk, so the
    next process (here a second Measured) measures again instead of inheriting a choice skewed by load."""
    monkeypatch.setattr(cache, "BUSY_LOAD", 0.0 if busy else float("inf"))
    cache.set_dir(tmp_path)
    try:
        calls = []
        for _ in range(2):  # two processes' worth of tables
            rec = Measured("test-busy").get("problem", lambda: calls.append(1) or {"path": "a"})
            assert rec == {"path": "a"}
    finally:
        cache.set_dir(None)
    assert len(calls) == (2 if busy else 1)


@pytest.mark.parametrize(
    "pick, want",
    [(lambda h: h[:, -1], "mkldnn_packed"), (lambda h: h[0].t(), "aten")],
    ids=["gapped-rows", "transposed"],
)
def test_a_frozen_weight_takes_rows_with_gaps_through_onednn(pick, want):
    """A row picked out of each batch (GPT-2's last position before its vocabulary head) has contiguous rows with gaps
    between them: the rule gathers them and runs oneDNN's prepacked weight (option prepack), at the compile (a fresh result) and at the
    call alike, where MKL's sgemm ran a wide weight at a fraction of that rate. A transposed input stays on MKL."""
    from irc import report
    from tests.conftest import compile_irc

    lin = torch.nn.Linear(256, 2048, bias=False).eval()  # 2 x 16 x 256 x 2048 flops: above the small-product cut
    fn = lambda h: lin(pick(h))  # noqa: E731
    h = torch.randn(16, 5, 256) if want != "aten" else torch.randn(3, 256, 16)
    start = report.mark()
    with torch.no_grad():
        f = compile_irc(fn, prepack=True)
        for _ in range(2):
            torch.testing.assert_close(f(h), fn(h), **TOL)
    (g,) = report.reports_since(start).graphs
    expected = want if externs.onednn_available(torch.float32) else "aten"
    assert g.extern_paths == {"tn.mm 16x256 @ 256x2048 float32, constant weight": expected}, g.extern_paths


def test_the_int8_externs_import_first_in_a_fresh_process():
    """quant.py builds on extern_ops' helpers and extern_ops registers quant's products: either may be imported first."""
    import subprocess
    import sys

    check = (
        "import irc.targets.cpu.libs.quant\n"
        "from irc.dialects import tensor as tn\n"
        "from irc.targets.cpu.libs.extern_ops import EXTERNS\n"
        "assert {tn.QConvOp, tn.QLinearDynamicOp, tn.WeightInt8MmOp, tn.WeightInt4MmOp} <= set(EXTERNS)\n"
    )
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
