"""--verify-diagnostics: compare the errors irc-opt reports with `// expected-error` comments, as mlir-opt does.

    %r = tn.frobnicate %x : tensor<4xf32>   // expected-error {{is not registered}}
    // expected-error @+1 {{result element type i32 is wrong}}
    %s = tn.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>

`@+N` / `@-N` point N lines down / up, `@above` / `@below` at the nearest line that is not itself an
expectation. An error matches an expectation on its line whose text it contains. Every expected
error must be reported and every reported error expected; each miss is printed with its location,
and irc-opt exits with code 1. (irc-opt stops a case at its first error, so one per case is the rule.)
An input with no expected-error comment at all keeps xdsl-opt's meaning of the flag: each case's
error is printed on stdout and the exit code is 0, for tests that FileCheck the printed errors.
"""

import re
from dataclasses import dataclass

from xdsl.utils.exceptions import ParseError

from .diagnostics import LocatedVerifyError

EXPECTED = re.compile(r"expected-(error|warning|remark|note)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")


@dataclass
class Expectation:
    line: int  # the line the error must be on
    text: str
    at: tuple[int, int]  # where the comment itself is (line, column), for "was not produced"


@dataclass
class Reported:
    line: int | None
    column: int
    msg: str


def _is_expectation_only(line: str) -> bool:
    return bool(re.fullmatch(r"\s*//\s*" + EXPECTED.pattern + r"\s*", line))


def expectations(text: str, line_offset: int) -> list[Expectation]:
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        for m in EXPECTED.finditer(line):
            if m[1] != "error":
                continue  # irc reports errors only
            where, target = m[2], i
            if where in ("above", "below"):
                step = -1 if where == "above" else 1
                target += step
                while 0 <= target < len(lines) and _is_expectation_only(lines[target]):
                    target += step
            elif where is not None:
                target += int(where)
            found.append(Expectation(target + 1 + line_offset, m[3], (i + 1 + line_offset, m.start() + 1)))
    return found


def reported(error: Exception) -> Reported:
    """The line, column and message of an error irc-opt reports (line None when it has no location)."""
    span = getattr(error, "span", None)
    msg = getattr(error, "msg", None) or str(error)
    if isinstance(error, (ParseError, LocatedVerifyError)) and span is not None:
        loc = span.get_location()
        return Reported(loc.line, loc.col, " ".join(str(msg).split()))
    return Reported(None, 0, " ".join(str(error).split()))


def check(name: str, text: str, line_offset: int, error: Exception | None) -> list[str]:
    """The mismatches between the case's expectations and the error it produced (None: no error)."""
    want = expectations(text, line_offset)
    got = [reported(error)] if error is not None else []
    problems = []
    for r in got:
        match = next((e for e in want if e.line == r.line and e.text in r.msg), None)
        if match is not None:
            want.remove(match)
        else:
            where = f"{name}:{r.line}:{r.column}" if r.line is not None else f"{name}"
            problems.append(f"{where}: error: unexpected error: {r.msg}")
    for e in want:
        problems.append(
            f'{name}:{e.at[0]}:{e.at[1]}: error: expected error "{e.text}" was not produced (on line {e.line})'
        )
    return problems
