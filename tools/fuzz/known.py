"""Open bugs the fuzzer has found in code other engineers own: a failure matching one is counted, not re-reported.

Each entry has a regression test in tests/fuzz/test_regressions.py marked xfail(strict=True): when
the bug is fixed the test passes unexpectedly and fails the suite, which is the reminder to delete
the entry here.
"""

import re
from dataclasses import dataclass

from .properties import FuzzFailure


@dataclass(frozen=True)
class KnownBug:
    name: str
    where: str
    pattern: str  # a regex searched in the failure's report (message, program and stage)
    kinds: tuple[str, ...] = ("crash", "mismatch", "pass-crash", "pass-mismatch")

    def matches(self, f: FuzzFailure) -> bool:
        return f.kind in self.kinds and re.search(self.pattern, f"{f.message}\n{f.mlir or ''}", re.S) is not None


KNOWN: tuple[KnownBug, ...] = (
    KnownBug("cpu-linear-k0", "targets/cpu/externs.py LinearKernel.choose: m = x.numel() // x.shape[-1] with K == 0",
             r"target 'cpu' raised ZeroDivisionError"),
)


def known(f: FuzzFailure) -> KnownBug | None:
    return next((k for k in KNOWN if k.matches(f)), None)
