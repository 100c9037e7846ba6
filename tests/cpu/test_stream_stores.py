"""Non-temporal stores (targets/cpu/codegen/stream.py): a pointwise kernel writes an output of at least STREAM_MIN_BYTES in
whole vectors around the caches, where the output's first element is aligned at run time, and with plain stores
where it is not. The bound is lowered here so that small buffers stand for ones beyond the last-level cache."""

import pytest
import torch

import irc
from irc.targets.cpu.codegen import tuning
from irc.targets.cpu.codegen.stream import Streams
from tests.conftest import compile_irc

from .programs import check


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


@pytest.fixture
def stream_from_64k(monkeypatch):
    monkeypatch.setattr(tuning, "STREAM_MIN_BYTES", 64 << 10)


def _streamed(program) -> list[int]:
    return [ln.plan["streamed"] for ln in program.compiled.launches]


POINTWISE = {
    "chain": (lambda x, y: (x * 2 + 1).relu() * y, lambda: (randn(256, 96), randn(256, 96))),
    "one-row": (lambda x, y: x - y, lambda: (randn(1, 16384), randn(1, 16384))),
    "broadcast": (lambda x, y: x * y, lambda: (randn(256, 80), randn(80))),
    "transposed-input": (lambda x, y: x.t() + y, lambda: (randn(96, 256), randn(256, 96))),
    "two-outputs": (lambda x, y: (x.exp(), x * y), lambda: (randn(128, 192), randn(128, 192))),
}


@pytest.mark.parametrize("case", sorted(POINTWISE))
def test_a_large_pointwise_output_streams_and_matches_eager(stream_from_64k, case):
    fn, make = POINTWISE[case]
    program = check(fn, *make(), cache=False)
    outputs = 2 if case == "two-outputs" else 1
    assert _streamed(program) == [outputs]
    assert program.compiled.llvm_ir.count("!nontemporal") >= outputs and "fence seq_cst" in program.compiled.llvm_ir


def test_small_or_misaligned_rows_and_reductions_keep_plain_stores(stream_from_64k):
    """Below the bound, with rows whose vectors do not start at multiples of 64 bytes (97 floats), and in kernels
    that reduce, every store is a plain one."""
    small = check(lambda x: x * 2, randn(16, 96), cache=False)
    odd_rows = check(lambda x: x * 2, randn(256, 97), cache=False)
    softmax = check(lambda x: x.softmax(-1), randn(256, 96), cache=False)
    for program in (small, odd_rows, softmax):
        assert set(_streamed(program)) == {0} and "!nontemporal" not in program.compiled.llvm_ir


def test_no_streaming_without_the_bound(monkeypatch):
    monkeypatch.setattr(tuning, "STREAM_MIN_BYTES", None)  # IRC_STREAM_STORES=0
    program = check(lambda x: x * 2, randn(256, 96), cache=False)
    assert _streamed(program) == [0] and "!nontemporal" not in program.compiled.llvm_ir


@pytest.mark.parametrize("offset", [1, 16])
def test_an_input_written_in_place_at_any_address_is_written_right(stream_from_64k, monkeypatch, offset):
    """An optimizer-like update writes its result into the input's own memory, which the caller may hand over at
    any address. The kernel has a streamed output, so it checks the address at run time: a view one float past an
    aligned start must take the plain stores (without the check the non-temporal store faults: SIGSEGV), one 16
    floats (64 bytes) past it may stream. Both agree with eager exactly."""
    checked = []
    aligned_outputs = Streams.aligned_outputs
    monkeypatch.setattr(Streams, "aligned_outputs", lambda self: checked.append(1) or aligned_outputs(self))
    base = randn(256 * 96 + offset)
    x = base[offset:].view(256, 96)
    want = x * 3 + 1
    mark = irc.report.mark()
    step = compile_irc(lambda x: x.mul_(3).add_(1), cache=False)
    step(x)
    assert irc.report.reports_since(mark).graphs[0].in_place_writes == 1
    assert checked, "the kernel was emitted without a streamed output"
    torch.testing.assert_close(x, want, rtol=0, atol=0)
