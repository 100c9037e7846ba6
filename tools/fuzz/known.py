"""Open bugs the fuzzer found in code other engineers own: a failure matching one is counted, not re-reported.

Each entry has a regression test in tests/fuzz/test_regressions.py marked xfail(strict=True): when
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
)


def known(f: FuzzFailure) -> KnownBug | None:
    return next((k for k in KNOWN if k.matches(f)), None)
