"""The text front door: mutated and truncated .mlir given to irc-opt ends in exit 0, or in exit 1 with a
located diagnostic (`file:line:col: error: ...`); never a traceback, an internal error or a hang; and
with --verify-each, no pass changes the result of an input that verifies.

Seeds are the inputs of the golden tests that irc-opt accepts (tests/filecheck, split at `// -----`,
comments dropped) and a built-in program; mutations change sizes and offsets, swap types, op names
and iterator kinds for others, truncate, delete, duplicate or swap spans and insert MLIR tokens.
"""

import contextlib
import io
import re
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

from .properties import Hang, time_limit

ROOT = Path(__file__).resolve().parents[2]
LOCATED = re.compile(r"^\S[^\n]*?:\d+:\d+: error: ", re.M)
STAGE_ORDER = re.compile(r"^irc-opt: error: --stage \S+ comes before the input's stage", re.M)
FLAGS = ((), ("--stage", "loop"), ("--stage", "mem"), ("--stage", "mem", "--verify-each"), ("--split-input-file",))
TOKENS = (
    "f32",
    "f64",
    "i1",
    "i64",
    "index",
    "tensor<4x8xf32>",
    "tensor<?xf32>",
    "memref<4xf32>",
    "%0",
    "%arg0",
    "0",
    "-1",
    "4",
    "?",
    "x",
    ",",
    ":",
    "(",
    ")",
    "{",
    "}",
    "<",
    ">",
    "[",
    "]",
    "->",
    "=",
    '"',
    "tn.add",
    "loop.nest",
    "loop.yield",
    "func.return",
    "affine_map<(d0) -> (d0)>",
    "dense<1.0>",
    "#",
    "^bb0",
    "@main",
    "\n",
)
KINDS = (
    ("digit",) * 4
    + ("type",) * 2
    + ("op", "iterator", "truncate", "truncate", "delete", "token", "insert", "duplicate", "swap-word")
)
SWAPS = {  # words that may stand for one another: the text still parses, the types or the meaning change
    "type": ("f32", "f64", "f16", "i1", "i8", "i32", "i64", "index"),
    "op": (
        "tn.add",
        "tn.mul",
        "tn.sub",
        "tn.maximum",
        "tn.sum",
        "tn.amax",
        "tn.mean",
        "tn.exp",
        "tn.neg",
        "tn.relu",
        "arith.addf",
        "arith.mulf",
        "arith.maximumf",
        "arith.addi",
    ),
    "iterator": ('"parallel"', '"reduction"'),
}
BUILTIN = (
    "func.func @main(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x1xf32> {\n"
    "  %a = tn.add %x, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>\n"
    "  %r = tn.relu %a : tensor<4x8xf32>\n"
    "  %s = tn.sum %r dims = [1] : tensor<4x8xf32> -> tensor<4x1xf32>\n"
    "  func.return %s : tensor<4x1xf32>\n}\n",
)


@cache
def seeds() -> tuple[str, ...]:
    """Small valid inputs: each `// -----` chunk of the golden tests (comment lines dropped) that irc-opt accepts."""
    out = list(BUILTIN)
    for path in sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")):
        for chunk in path.read_text().split("// -----"):
            text = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//")).strip()
            if text and len(text) < 3000 and "expected-error" not in chunk:
                out.append(text + "\n")
    return tuple(t for t in out if run_opt(t)[0] == 0)


@st.composite
def mutated(draw, max_mutations: int = 3) -> str:
    text = draw(st.sampled_from(seeds()))
    for _ in range(draw(st.integers(1, max_mutations))):
        text = _mutate(draw, text)
    return text


def _mutate(draw, text: str) -> str:
    n = len(text)
    i = draw(st.integers(0, n))
    j = draw(st.integers(i, min(n, i + 40)))
    kind = draw(st.sampled_from(KINDS))
    if kind == "truncate":
        return text[:i]
    if kind == "delete":
        return text[:i] + text[j:]
    if kind == "insert":
        return text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
    if kind == "duplicate":
        return text[:j] + text[i:j] + text[j:]
    if kind in SWAPS:
        found = list(re.finditer("|".join(rf"(?<![\w.]){re.escape(w)}(?![\w.])" for w in SWAPS[kind]), text))
        if found:
            w = draw(st.sampled_from(found))
            return text[: w.start()] + draw(st.sampled_from(SWAPS[kind])) + text[w.end() :]
    words = [m for m in re.finditer(r"[%@#^]?[\w.]+|[^\w\s]", text)]
    if not words:
        return text[:i]
    w = draw(st.sampled_from(words))
    if kind == "digit":
        nums = list(re.finditer(r"(?<![A-Za-wyz_.\d])\d+(?![\d.])", text))  # sizes, offsets, indices; not f32 or %0
        if nums:
            w = draw(st.sampled_from(nums))
            return text[: w.start()] + str(draw(st.sampled_from((0, 1, 2, 3, 5, 8, 64, 2**31)))) + text[w.end() :]
    other = draw(st.sampled_from(words)).group() if kind == "swap-word" else draw(st.sampled_from(TOKENS))
    return text[: w.start()] + other + text[w.end() :]


def run_opt(text: str, flags: tuple[str, ...] = (), timeout: float = 30.0) -> tuple[int, str, str]:
    """irc-opt in-process on `text` with `flags`: (exit code, stdout, stderr); a hang raises Hang."""
    from irc.tools.opt import main

    with tempfile.TemporaryDirectory(prefix="irc-fuzz-opt-") as tmp:
        path = Path(tmp) / "input.mlir"
        path.write_text(text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(timeout):
            try:
                code = main(
                    [str(path), *flags, "--reproducer", str(Path(tmp) / "repro.mlir")]
                    if "--verify-each" in flags
                    else [str(path), *flags]
                )
            except Hang:
                raise
            except BaseException as e:  # an exception escaping main() is a traceback for the user
                return -1, out.getvalue(), f"Traceback: {type(e).__name__}: {e}"
        return code, out.getvalue(), err.getvalue()


def front_door_problem(text: str, flags: tuple[str, ...] = ()) -> str | None:
    """None when irc-opt behaves on `text`; else what went wrong."""
    try:
        code, out, err = run_opt(text, flags)
    except Hang as e:
        return f"irc-opt {' '.join(flags)} hangs: {e}"
    if code == 0:
        return None
    if code != 1:
        return f"irc-opt {' '.join(flags)} exits with {code}: {err.strip()[-600:]}"
    if "Traceback" in err or "internal error" in err:
        return f"irc-opt {' '.join(flags)} fails without a diagnostic: {err.strip()[-600:]}"
    if "--verify-each" in flags and "changed the result" in err:
        return f"irc-opt {' '.join(flags)}: a pass miscompiles input that verifies: {err.strip()[-600:]}"
    if LOCATED.search(err) or STAGE_ORDER.search(err):
        return None  # a located diagnostic, or --stage names a stage before the input's
    return f"irc-opt {' '.join(flags)} gives no located diagnostic: {err.strip()[-600:]}"


class FrontDoorFailure(AssertionError):
    """irc-opt misbehaved on an input: the problem, the command line and the input text."""

    kind = "front-door"

    def __init__(self, problem: str, text: str, flags: tuple[str, ...]):
        self.problem, self.text, self.flags = problem, text, flags
        self.message = problem.splitlines()[0]
        super().__init__(self.report())

    def report(self) -> str:
        return (
            f"irc-fuzz: front-door: {self.problem}\n# ---- reproduce: save the input below as input.mlir, then run ----\n"
            f"irc-opt input.mlir {' '.join(self.flags)}\n// ---- input.mlir ----\n{self.text}"
        )


def check_front_door(text: str, flags: tuple[str, ...] = ()) -> None:
    if (problem := front_door_problem(text, flags)) is not None:
        raise FrontDoorFailure(problem, text, flags)
