"""Every environment variable irc reads, in one table: name, kind, default, valid values, what it does.

Readers call `get(NAME)`, never os.environ: a set value that does not parse raises EnvError naming the
variable and its valid values. The backend calls `check_all()` before it compiles anything, so a bad value
fails the first compile with that message instead of breaking the import of a target module inside the
compile (which would run the graph eagerly). An empty value counts as unset. docs/guide.md's tables are
`markdown_table(user)` and `markdown_table(development)` (tests/unit/test_options.py checks they agree).
This module imports nothing from irc.
"""

import contextlib
import difflib
import math
import os
import re
import warnings
from dataclasses import dataclass

# kind -> what a valid value looks like (error messages and the guide)
KINDS = {
    "flag": "1 or 0 (also true/false, on/off, yes/no)",
    "count": "a whole number >= 0",
    "size": "bytes, or with a K, M, G or T suffix (500M)",
    "seconds": "seconds, a number >= 0 (0.5, 60)",
    "path": "a path",
    "choice": "",  # the variable's choices
    "choices": "",  # a comma-separated list of the variable's choices
    "logs": "comma-separated: info, debug, or topics (+topic for DEBUG)",
    "torch": "as torch reads it",
    "cpu": "native, x86-64-v2, x86-64-v3, x86-64-v4, an LLVM x86-64 CPU name (skylake), aarch64, aarch64:NAME (an LLVM AArch64 CPU)",  # torch's own variables: torch checks them, irc only looks
}
_CPU_NAME = re.compile(r"(aarch64(:[a-z0-9][a-z0-9._+-]*)?|[a-z0-9][a-z0-9._+-]*)")
_TRUE, _FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
_SCALE = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class EnvError(ValueError):
    """An environment variable irc reads holds a value it cannot use."""


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str  # a key of KINDS
    default: str | None  # as it would be written in the environment; None: unset
    doc: str
    choices: tuple[str, ...] = ()
    development: bool = False  # for irc's own tests and debugging, not for users

    @property
    def valid(self) -> str:
        if self.kind == "choices":
            return "comma-separated: " + ", ".join(self.choices)
        return ", ".join(self.choices) if self.kind == "choice" else KINDS[self.kind]

    def parse(self, text: str):
        value = text.strip()
        if self.kind == "flag" and value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        if self.kind == "count" and value.isdigit():
            return int(value)
        if self.kind == "size":
            with contextlib.suppress(ValueError):
                return parse_size(value)
        if self.kind == "seconds":
            with contextlib.suppress(ValueError):
                if math.isfinite(seconds := float(value)) and seconds >= 0:
                    return seconds
        if self.kind in ("path", "logs", "torch"):  # IRC_LOGS's words are checked by irc.log, which knows the topics
            return value
        if self.kind == "cpu" and _CPU_NAME.fullmatch(value):  # whether LLVM knows the name: jit.host() asks it
            return value
        if self.kind == "choice" and value in self.choices:
            return value
        if (
            self.kind == "choices"
            and (items := [v.strip() for v in value.split(",")])
            and set(items) <= set(self.choices)
        ):
            return tuple(dict.fromkeys(items))
        close = difflib.get_close_matches(value, self.choices, n=1) if self.kind == "choice" else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise EnvError(f"irc: environment variable {self.name}={text!r} is not valid{hint}; valid values: {self.valid}")


def parse_size(text: str) -> int:
    """Bytes for "123", "500K", "500M", "1G", "1.5GiB" (powers of 1024); ValueError names the accepted forms."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = _SCALE.get(t[-1:], 1)
    try:
        n = float(t[:-1] if scale > 1 else t)
    except ValueError:
        raise ValueError(f"invalid size {text!r}: use {KINDS['size']}") from None
    if not math.isfinite(n) or n < 0:
        raise ValueError(f"invalid size {text!r}: it must be a finite number of bytes, not negative")
    return int(n * scale)


_ALL = (
    Variable("IRC_LOGS", "logs", None, "switch on log topics and print them on stderr (see Logging)"),
    Variable("IRC_PROGRESS", "flag", "1", "a progress line on stderr for compiles slower than a second"),
    Variable(
        "IRC_DUMP_DIR", "path", None, "default of the `dump_dir` option: write every stage's IR of every graph there"
    ),
    Variable(
        "IRC_CPU_STRICT",
        "flag",
        "0",
        "default of the `strict` option: irc's compile errors raise instead of falling back (to eager, or to the reference target)",
    ),
    Variable("IRC_CACHE", "flag", "1", "the on-disk cache of compiled code for the process"),
    Variable(
        "IRC_CACHE_DIR", "path", None, "where the cache lives (unset: `$XDG_CACHE_HOME/irc`, else `~/.cache/irc`)"
    ),
    Variable("IRC_CACHE_MAX_SIZE", "size", "1G", "cap of the on-disk cache; least recently used entries go first"),
    Variable(
        "IRC_CPU",
        "cpu",
        "native",
        "cpu: generate code for this CPU instead of the host's (its vector width and instructions); aarch64 code is generated, never run",
    ),
    Variable(
        "IRC_COMPILE_DEADLINE",
        "seconds",
        "60",
        "cpu: most seconds one module's machine code may take to compile, in a worker process: past it the module is compiled again at O1, and past that too the graph runs on the reference target (0: no deadline, compiled in-process)",
    ),
    Variable("IRC_POOL_BYTES", "size", "1G", "cpu: most free buffer memory the allocator pool keeps for reuse"),
    Variable(
        "IRC_HUGE_PAGES",
        "flag",
        "1",
        "cpu: large buffers on transparent huge pages, pooled (0: torch's allocator for everything)",
    ),
    Variable(
        "IRC_PARALLEL_MIN_WORK",
        "count",
        "65536",
        "cpu: least work (elements) of a launch before it runs on torch's threads",
    ),
    Variable("IRC_PREFETCH", "count", "2048", "cpu: bytes a streaming load prefetches ahead (0: no prefetch)"),
    Variable(
        "IRC_STREAM_STORES",
        "size",
        None,
        "cpu: a pointwise kernel writes an output of at least this size with non-temporal stores, around the caches (unset: 3/4 of the last-level cache; 0: never)",
    ),
    Variable(
        "IRC_EXTERN_PATH",
        "choice",
        None,
        "cpu: force one library path for linear and convolution kernels instead of the rule (a kernel without that path keeps the rule's)",
        choices=("aten", "aten_cl", "mkldnn", "mkldnn_packed"),
    ),
    Variable(
        "IRC_TRITON_ARCH",
        "choices",
        None,
        "triton: also compile every kernel ahead of time for these GPUs and put registers, spills and shared memory in the compile report",
        choices=("sm_80", "sm_90", "gfx942"),
    ),
    Variable(
        "TORCH_COMPILE_DEBUG",
        "torch",
        None,
        "torch's debug switch: `1`, without `dump_dir` or IRC_DUMP_DIR, makes irc dump into `<torch's debug dir>/irc`",
    ),
    Variable(
        "TORCH_LOGS",
        "torch",
        None,
        "torch's log settings: irc's loggers are the names `irc` and `irc_<topic>` (see Logging)",
    ),
    Variable(
        "IRC_TEST_TARGET",
        "choice",
        None,
        "run tests/numeric on this target",
        choices=("cpu", "reference", "triton"),
        development=True,
    ),
    Variable(
        "IRC_OPINFO_FULL", "flag", "0", "tests/opinfo: every OpInfo sample instead of the CI subset", development=True
    ),
    Variable(
        "IRC_FUZZ_PROFILE",
        "choice",
        "irc-fuzz-ci",
        "the Hypothesis profile of tests/fuzz",
        choices=("irc-fuzz-ci", "irc-fuzz-long"),
        development=True,
    ),
    Variable(
        "IRC_TEST_COMPILE_HANG",
        "choices",
        None,
        "the compile worker hangs before compiling a module at these levels, as a pass that never ends would (tests/cpu/test_compile_deadline.py)",
        choices=("O3", "O1"),
        development=True,
    ),
    Variable(
        "IRC_TEST_MISCOMPILE",
        "choice",
        None,
        "inject a known miscompile the fuzzer must find (tests/fuzz/test_known_miscompile.py)",
        choices=("fusion-index",),
        development=True,
    ),
)
VARIABLES = {v.name: v for v in _ALL}


def get(name: str):
    """The parsed value of `name` (its default when unset or empty); EnvError when it does not parse."""
    var = VARIABLES[name]
    text = os.environ.get(name) or var.default
    return None if text is None else var.parse(text)


def check_all() -> None:
    """Parse every variable (the first bad one raises EnvError); warn of an IRC_* name irc does not know."""
    for name in VARIABLES:
        get(name)
    for name in sorted(n for n in os.environ if n.startswith("IRC_") and n not in VARIABLES):
        close = difflib.get_close_matches(name, VARIABLES, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.warn(f"irc: unknown environment variable {name} is ignored{hint}", stacklevel=2)


def markdown_table(development: bool) -> str:
    """The guide's table of the user's (or the development) variables."""
    rows = ["| variable | values | default | effect |", "| --- | --- | --- | --- |"]
    for v in _ALL:
        if v.development == development:
            rows.append(f"| `{v.name}` | {v.valid} | {v.default if v.default is not None else 'unset'} | {v.doc} |")
    return "\n".join(rows)
