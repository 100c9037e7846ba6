"""Externs: every library path against eager torch (float32 tolerances), and the cached choice."""

import pytest
import torch
import torch.nn.functional as F

from irc.targets.cpu import cache, externs

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


def test_choice_is_measured_once_then_read_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("IRC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("IRC_EXTERN_PATH", raising=False)
    monkeypatch.setattr(externs.CHOICES, "memory", {})
    monkeypatch.setitem(cache._config, "enabled", True)  # whatever IRC_CACHE says
    w, x = torch.randn(40, 24), torch.randn(8, 24)
    with cache.enabled(True):
        before = dict(externs.STATS)
        path = externs.LinearKernel(w, None, "relu").choose(x)
        assert path in externs.LinearKernel(w).paths()
        assert externs.STATS["measured"] == before["measured"] + 1
        externs.LinearKernel(w, None, "relu").choose(x)  # memory hit: nothing new
        assert externs.STATS["measured"] == before["measured"] + 1
        monkeypatch.setattr(externs.CHOICES, "memory", {})  # a new process, as far as the choice knows
        assert externs.LinearKernel(w, None, "relu").choose(x) == path
        assert externs.STATS == {"measured": before["measured"] + 1, "disk_hits": before["disk_hits"] + 1}
    torch.testing.assert_close(externs.linear(x, w, None, "relu"), F.relu(F.linear(x, w)), **TOL)


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


def test_graph_weight_prepacked_once_and_never_stale(monkeypatch):
    """A matmul whose weight is a graph input is prepacked once for oneDNN and reused while the weight is
    unchanged; an in-place update (an optimizer step) is seen, and the weight is not packed again."""
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
    fn = lambda x, w: F.linear(x, w).relu()  # noqa: E731  (2*64*256*512 flops: above the small-product cut)
    f = compile_irc(fn)
    x, w = torch.randn(64, 256), torch.randn(512, 256)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(f(x, w), fn(x, w), **TOL)
        assert len(runs) == 2 and len(packs) == 1  # packed once, the packed weight reused by the second call
        w.mul_(-0.5)
        torch.testing.assert_close(f(x, w), fn(x, w), **TOL)
        w.add_(1.0)
        torch.testing.assert_close(f(x, w), fn(x, w), **TOL)
    assert len(packs) == 1 and len(runs) == 2  # once changed, the weight is a plain operand: never packed again


@pytest.mark.parametrize("busy", [False, True], ids=["quiet", "busy"])
def test_choices_measured_on_a_busy_machine_stay_in_the_process(tmp_path, monkeypatch, busy):
    """cache.quiet(): a measurement taken while the load average is high is used, not kept on disk, so the
    next process (here a second Measured) measures again instead of inheriting a choice skewed by load."""
    from irc.targets.cpu import cache

    monkeypatch.setattr(cache, "BUSY_LOAD", 0.0 if busy else float("inf"))
    cache.set_dir(tmp_path)
    try:
        calls = []
        for _ in range(2):  # two processes' worth of tables
            rec = cache.Measured("test-busy").get("problem", lambda: calls.append(1) or {"path": "a"})
            assert rec == {"path": "a"}
    finally:
        cache.set_dir(None)
    assert len(calls) == (2 if busy else 1)
