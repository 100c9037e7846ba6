"""--verify-each reproducers: the IR before the pass that changed the result, the pass and the seed, in one .mlir file.

    // irc-opt reproducer: pass 'test-swap-operands' changed the result of @main: result 0 at [0] is ...
    // replay: irc-opt --run-reproducer repro.mlir
    // pass: test-swap-operands
    // seed: 0
    builtin.module { ... }

The header is comments, so the file is also an ordinary irc-opt input. `irc-opt --run-reproducer
FILE` parses it, runs that one pass with the result check on the same seed's inputs, and exits
with code 1 when the pass still changes the result.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from irc.ir.check import ResultMismatch
from irc.ir.passes import pass_label


class ReproducerError(Exception):
    """A file --run-reproducer cannot replay; the message says why."""


@dataclass
class Reproducer:
    text: str  # the whole file (the header is comments)
    pass_spec: str
    seed: int


def write(path: Path, m: ResultMismatch) -> None:
    one_line = " ".join(str(m).split())
    header = [
        f"// irc-opt reproducer: {one_line}",
        f"// replay: irc-opt --run-reproducer {path}",
        f"// pass: {pass_label(m.pass_)}",
        f"// seed: {m.seed}",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n" + m.before)


def read(path: str) -> Reproducer:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise ReproducerError(f"--run-reproducer: cannot read {path!r}: {e.strerror}") from None
    found = dict(re.findall(r"^//\s*(pass|seed):\s*(.*?)\s*$", text, re.M))
    if "pass" not in found or not re.fullmatch(r"\d+", found.get("seed", "")):
        raise ReproducerError(
            f"--run-reproducer {path}: not an irc-opt reproducer (it needs `// pass: NAME` and `// seed: N` lines)"
        )
    return Reproducer(text, found["pass"], int(found["seed"]))
