"""The library rule's fact about the machine (issue 54): MKL's own code branch, read from torch's library
(externs.mkl_branch), decides whether oneDNN's plain path outruns torch.mm for a changing float32 weight
(externs.onednn_outruns_mkl); where MKL cannot be asked, the default is torch.mm; the fact is in the cache key."""

import ctypes
import ctypes.util
import platform

import pytest
import torch

from irc.options import Options
from irc.targets.cpu.libs import externs
from irc.targets.cpu.target import CpuTarget


@pytest.fixture
def fresh(monkeypatch):
    """mkl_branch asked again under this test's patches, and again after them."""
    monkeypatch.delenv("IRC_EXTERN_PATH", raising=False)
    externs.mkl_branch.cache_clear()
    yield
    externs.mkl_branch.cache_clear()


class FakeMKL:
    """A library exporting MKL's two branch queries (only MKL's service-layer names, as torch's wheel does)."""

    def __init__(self, auto: int, fixed: int = 1):  # 1: MKL_CBWR_BRANCH_OFF, no branch fixed
        self.mkl_serv_cbwr_get_auto_branch = lambda: auto
        self.mkl_serv_cbwr_get = lambda option: fixed if option == externs.MKL_CBWR_BRANCH else -2


def _vendor() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("vendor_id")), None)
    except OSError:
        return None


def _changing_weight_path() -> str:
    return externs.linear_rule(externs.linear_paths(torch.float32, constant=False), torch.float32, True)


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="torch is built without MKL")
def test_mkl_answers_as_its_vendor_rule_says(fresh, monkeypatch):
    """On this machine MKL answers, and its answer agrees with what MKL's documentation says of the vendor: its ISA
    branches only on Intel's CPUs (AVX2 or better on any Intel CPU torch supports), MKL_CBWR_AUTO on others."""
    monkeypatch.delenv("MKL_CBWR", raising=False)
    vendor, branch = _vendor(), externs.mkl_branch()
    if platform.machine() not in ("x86_64", "AMD64") or vendor not in ("AuthenticAMD", "GenuineIntel"):
        pytest.skip(f"no vendor expectation for {platform.machine()} {vendor}")
    if vendor == "AuthenticAMD":
        assert branch == externs.MKL_CBWR_AUTO and externs.onednn_outruns_mkl()
    else:
        assert branch is not None and branch >= externs.MKL_CBWR_AVX2 and not externs.onednn_outruns_mkl()


@pytest.mark.parametrize(
    "no_query",
    [
        lambda m: m.setattr(externs, "_torch_library", lambda: None),  # no torch library to load
        lambda m: m.setattr(externs, "_torch_library", lambda: ctypes.CDLL(ctypes.util.find_library("c"))),  # no query
        lambda m: m.setattr(torch.backends.mkl, "is_available", lambda: False),  # torch without MKL: another BLAS
        lambda m: m.setattr(externs, "_torch_library", lambda: FakeMKL(auto=-4)),  # a CPU type MKL does not know
    ],
    ids=["no-library", "no-symbol", "no-mkl", "error"],
)
def test_without_an_answer_the_default_is_torch_mm(fresh, monkeypatch, no_query):
    no_query(monkeypatch)
    assert externs.mkl_branch() is None and not externs.onednn_outruns_mkl()
    assert _changing_weight_path() == "aten"
    if externs.onednn_available():  # a constant weight is prepacked for oneDNN on every machine
        assert externs.linear_rule(externs.linear_paths(torch.float32, True), torch.float32, True) == "mkldnn_packed"


@pytest.mark.skipif(not externs.onednn_available(), reason="torch is built without oneDNN")
@pytest.mark.parametrize(
    "auto, fixed, branch, plain",
    [
        (2, 1, 2, True),  # not Intel's CPU: MKL's generic kernels
        (10, 1, 10, False),  # Intel AVX2
        (12, 1, 12, False),  # Intel AVX-512
        (12, 2, 12, False),  # MKL_CBWR=AUTO: the auto branch
        (12, 3, 3, True),  # MKL_CBWR=COMPATIBLE on an AVX-512 Intel CPU: SSE2 kernels
    ],
)
def test_the_rule_follows_mkls_branch(fresh, monkeypatch, auto, fixed, branch, plain):
    monkeypatch.setattr(externs, "_torch_library", lambda: FakeMKL(auto, fixed))
    assert externs.mkl_branch() == branch and externs.onednn_outruns_mkl() == plain
    assert _changing_weight_path() == ("mkldnn" if plain else "aten")


def test_the_branch_is_in_the_cache_key(fresh, monkeypatch):
    """The target's machine facts (part of every mem-stage and warm-start key) carry the queried branch, so
    machines whose MKL answers differently never share a lowering."""
    here = CpuTarget().rules([], Options()).facts
    assert f"mkl_branch={externs.mkl_branch()}" in here
    other = FakeMKL(auto=10 if externs.mkl_branch() == 12 else 12)  # another machine's MKL
    monkeypatch.setattr(externs, "_torch_library", lambda: other)
    externs.mkl_branch.cache_clear()
    assert CpuTarget().rules([], Options()).facts != here
