"""Open bugs the fuzzer found in code other engineers own: a failure matching one is counted, not re-reported.

Each entry has a regression test in tests/fuzz/test_regressions*.py marked xfail(strict=True): when
the bug is fixed the test passes unexpectedly and fails the suite, the reminder to delete the entry here.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from .properties import FuzzFailure


@dataclass(frozen=True)
class KnownBug:
    name: str
    where: str
    pattern: str  # a regex searched in the failure's message
    kinds: tuple[str, ...] = ("crash", "mismatch", "pass-crash", "pass-mismatch")
    also: Callable[[FuzzFailure], bool] = lambda f: True  # a further condition on the failure's program

    def matches(self, f: FuzzFailure) -> bool:
        return f.kind in self.kinds and re.search(self.pattern, f.message) is not None and self.also(f)


KNOWN: tuple[KnownBug, ...] = (
    KnownBug(
        "nansum-over-no-dims-backward",
        "torch's nansum decomposition (core_aten_decompositions; inductor fails the same way): a training graph of "
        "nansum(x, dim=()) fails in AOT autograd's trace; a decomposition written in irc failed the same way",
        r"shape '\[[0-9a-z, ]*\]' is invalid for input of size [0-9a-z]+",  # sizes, or symbols ([s62]) when dynamic
        kinds=("crash",),
        also=lambda f: "nansum" in _source(f),
    ),
)


def _source(f: FuzzFailure) -> str:
    from .programs import source

    return source(f.program) if getattr(f, "program", None) is not None else ""


def known(f: FuzzFailure) -> KnownBug | None:
    return next((k for k in KNOWN if k.matches(f)), None)
