"""A damaged disk cache costs a rebuild, never the process: every kind of entry (obj, mem-ir: the mem stage's
binary form, emitted: the cpu target's emission record, graph: a warm-start record, autotune, layout, Triton
source; the mem stage's text, cached only where its binary form fails, is a JSON entry as graph and autotune are)
damaged every way, two processes racing to fill one cache, a directory others may write.

Each child process compiles the same four graphs (a convolution: obj, mem-ir, emitted, layout; a max-autotune
linear: autotune; a Triton kernel: triton source and its graph record; a reduction: emitted and graph records
that do not depend on a measured layout), checks their results against eager and prints the warnings
of the irc.cache logger. The children run concurrently to keep the test short."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irc import cache
from irc.targets.cpu.runtime import jit
from tests.cpu.kernels import square_plus

CHILD = r"""
import json, logging, sys, torch, irc
from irc import cache
from irc.targets.cpu.runtime import autotune
autotune.BUDGET_S = 0.2  # the test checks the cache, not the choice
cache.BUSY_LOAD = float("inf")  # keep measurements whatever the load of the machine
warnings = []
class Keep(logging.Handler):
    def emit(self, record): warnings.append(record.getMessage())
logging.getLogger("irc.cache").addHandler(Keep(level=logging.WARNING))
torch.manual_seed(0)
conv = torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3), torch.nn.ReLU())
lin = torch.nn.Linear(24, 40)
x, y = torch.randn(1, 32, 40, 40), torch.randn(8, 24)
cases = [(conv, x, {}), (lambda a: lin(a).relu() * 2, y, {"mode": "max-autotune"}),
         (lambda a: (a * 3).sin() + 1, y, {"target": "triton"}), (lambda a: (a * 2).exp().sum(-1), y, {})]
with torch.no_grad():
    for fn, a, opts in cases:
        torch._dynamo.reset()
        f = torch.compile(fn, backend=irc.backend, options={"strict": True, **opts})
        torch.testing.assert_close(f(a), fn(a), rtol=1e-4, atol=1e-4)
print(json.dumps(warnings))
"""
KINDS = ("obj", "mem-ir", "emitted", "graph", "autotune", "layout", "triton")
ROOT = Path(__file__).resolve().parents[2]


def _start(cache_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "IRC_CACHE_DIR": str(cache_dir), "IRC_CACHE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=env,
        cwd=ROOT.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(p: subprocess.Popen) -> list[str]:
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}:\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])


def _entries(d: Path) -> dict[str, list[Path]]:
    return {k: sorted(p for p in (d / k).rglob("*") if p.is_file()) for k in KINDS}


def _valid(path: Path, kind: str) -> bool:
    data = path.read_bytes()
    if kind == "triton":
        return b"@triton.jit" in data and path.name.startswith("irc_triton_")
    return cache._verify(data, path.name)[0] is not None


def _damage(files: list[Path], how: str) -> None:
    rng = random.Random(0)
    contents = [f.read_bytes() for f in files]
    for i, f in enumerate(files):
        data = contents[i]
        new = {
            "random": lambda: rng.randbytes(100),
            "empty": lambda: b"",
            "half": lambda: data[: len(data) // 2],
            "wrong-key": lambda: contents[(i + 1) % len(files)],
        }[how]()
        f.write_bytes(new)


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A cache filled by two processes racing to write the same entries (both compile the same graphs)."""
    d = tmp_path_factory.mktemp("cache") / "irc"
    racers = [_start(d), _start(d)]
    assert [_finish(p) for p in racers] == [[], []]  # both succeed, neither found a damaged entry
    return d


def test_two_processes_racing_leave_whole_entries(filled):
    found = _entries(filled)
    assert all(found[k] for k in KINDS), {k: len(v) for k, v in found.items()}
    assert all(_valid(p, k) for k in KINDS for p in found[k])
    assert not [p for p in filled.rglob(".*") if p.is_file()]  # no temporaries left behind


def test_every_kind_of_entry_damaged_every_way_is_rebuilt(filled, tmp_path):
    runs = {}
    for how in ("random", "empty", "half", "wrong-key"):
        d = tmp_path / how
        shutil.copytree(filled, d)
        _damage([p for k in KINDS for p in _entries(d)[k]], how)  # wrong-key: each gets its neighbour's entry
        runs[how] = (d, _start(d))
    for how, (d, p) in runs.items():
        warnings = _finish(p)  # exit 0 and results equal to eager's
        for k in KINDS:
            assert any("discarding damaged cache entry" in w and f"{os.sep}{k}{os.sep}" in w for w in warnings), (
                how,
                k,
                warnings,
            )
        rebuilt = _entries(d)
        assert all(rebuilt[k] for k in KINDS), (how, {k: len(v) for k, v in rebuilt.items()})


def test_a_directory_others_may_write_is_not_used(tmp_path, caplog):
    """Object code is loaded only from a directory of the user's own that group and others cannot write."""
    d = tmp_path / "shared"
    cache.set_dir(d)
    try:
        lib = jit.Engine().compile(_module(), use_cache=True)
        assert not lib.cache_hit and len(_entries(d)["obj"]) == 1
        d.chmod(0o777)
        cache._trust.clear()  # a new process: the directory is checked again
        with caplog.at_level("WARNING", logger="irc.cache"):
            again = jit.Engine().compile(_module(), use_cache=True)
            jit.Engine().compile(_module(2.0), use_cache=True)
        assert not again.cache_hit  # the entry there was not loaded
        assert len(_entries(d)["obj"]) == 1  # nor was anything written
        warned = [r.getMessage() for r in caplog.records if r.name == "irc.cache"]
        assert len(warned) == 1 and "writable by group/others" in warned[0], warned  # once per process
    finally:
        d.chmod(0o700)
        cache._trust.clear()
        cache.set_dir(None)


def _module(c: float = 1.0):
    from llvmlite import ir

    m = ir.Module()
    square_plus(m, "k", c)
    return m
