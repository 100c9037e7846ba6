"""lifetime.compiling(): while irc compiles, the cycle collector is off and the objects made before are frozen out of
its scans (gc.freeze), from the first call's import of the compiler on; afterwards the heap and the collector are as
they were, and a heap the program froze itself stays frozen, a collector it switched off stays off."""

import gc
import subprocess
import sys

import torch

import irc
from irc import lifetime

# a child process: is the heap frozen while the compiler's modules are first imported (under torch.compile)?
CHILD = r"""
import gc, importlib.abc, sys
import torch, irc

seen = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "irc.dynamo.backend":
            seen.append(gc.get_freeze_count())
        return None
sys.meta_path.insert(0, Watch())
assert "irc.dynamo.backend" not in sys.modules
f = torch.compile(lambda x: x.sin() + 1, backend=irc.backend)
x = torch.randn(5)
torch.testing.assert_close(f(x), x.sin() + 1)
print(seen[0] > 0, gc.get_freeze_count())
"""


def test_the_first_call_imports_the_compiler_over_a_frozen_heap():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    frozen_during_import, frozen_after = out.stdout.split()
    assert frozen_during_import == "True" and frozen_after == "0"


def test_a_heap_the_program_froze_stays_frozen():
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with lifetime.compiling():
            assert 0 < gc.get_freeze_count() <= before  # nothing more frozen
        f = torch.compile(lambda x: x * 2 + 1, backend=irc.backend)
        torch.testing.assert_close(f(torch.ones(3)), torch.full((3,), 3.0))
        assert gc.get_freeze_count() > 0  # not unfrozen
    finally:
        gc.unfreeze()


def test_compiling_unfreezes_what_it_froze_and_collects_again():
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    with lifetime.compiling():
        assert gc.get_freeze_count() > 0 and not gc.isenabled()
        with lifetime.compiling():  # nested (a backward compiled while a forward's compile is open)
            assert gc.get_freeze_count() > 0 and not gc.isenabled()
        assert gc.get_freeze_count() > 0 and not gc.isenabled()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_collector_the_program_switched_off_stays_off():
    gc.disable()
    try:
        with lifetime.compiling():
            assert gc.get_freeze_count() == 0 and not gc.isenabled()
        f = torch.compile(lambda x: x * 3 - 1, backend=irc.backend)
        torch.testing.assert_close(f(torch.ones(3)), torch.full((3,), 2.0))
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
