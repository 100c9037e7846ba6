"""irc's logging: the `irc` logger and its topics, IRC_LOGS, and the progress line of slow compiles.

Every message irc logs goes to a child of the `irc` logger named for its topic, so the standard
`logging` configuration works (`logging.getLogger("irc.fusion").setLevel(logging.DEBUG)`), and
the environment variable IRC_LOGS switches topics on without code:

    IRC_LOGS=info                      every topic at INFO, on stderr
    IRC_LOGS=debug                     every topic at DEBUG (adds each fusion refusal, each pass's time)
    IRC_LOGS=stages,cache              only these topics, at INFO
    IRC_LOGS=+fusion,fallbacks         a leading + means DEBUG for that topic

Topics: stages (each compile stage of each graph, with its time), fallbacks (aten calls run eagerly,
whole graphs run eagerly, kernels on the reference evaluator), fusion (kernels fused, refusals with
their reasons), cache (on-disk cache hits and misses), recompiles (Dynamo compiling a frame again).
Without IRC_LOGS nothing is configured: warnings (a graph that runs eagerly because of an irc
error) reach stderr through Python's last-resort handler, as any library's do. A malformed IRC_LOGS
is an error (env.EnvError) at the first compile, naming the valid words.

irc's loggers are also torch logs: `irc` and `irc_<topic>` are registered names of TORCH_LOGS
(`TORCH_LOGS="+irc"`, `TORCH_LOGS="irc_fusion,dynamo"`) and of `torch._logging.set_logs(modules=
{"irc_fusion": logging.DEBUG})`. TORCH_LOGS is parsed when torch is imported, before irc is: the
`torch.backends` entry point calls torch_logging_hook() at that moment. Once registered, torch owns
those loggers as it owns its own (its handler on each, no propagation to the root logger); so irc
registers only when TORCH_LOGS is set, or at its first compile (for set_logs).

A compile that takes longer than a second prints a progress line on stderr while it runs
(`irc: compiling graph 3 (forward): loop+mem ... 1.8 s`) and a last line when it ends;
IRC_PROGRESS=0 turns it off. This module imports nothing from irc.
"""

import difflib
import logging
import sys
import threading
import time

from irc.env import EnvError
from irc.env import get as env_get

TOPICS = ("stages", "fallbacks", "fusion", "cache", "recompiles")
ROOT = "irc"


def get(topic: str) -> logging.Logger:
    """The logger of one topic: `irc.<topic>`."""
    assert topic in TOPICS, f"unknown irc log topic {topic!r}; topics: {', '.join(TOPICS)}"
    return logging.getLogger(f"{ROOT}.{topic}")


class _Stderr(logging.StreamHandler):
    """A handler on whatever sys.stderr is at the time of the record (pytest's capture swaps it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


_handler: logging.Handler | None = None
_current = threading.local()  # the Progress of the compile running on this thread
_configured: list[str | None] = [None]
_ours: list[str] = []  # the loggers whose level IRC_LOGS set


def parse(spec: str) -> dict[str, int]:
    """IRC_LOGS text -> {logger name: level}. Raises EnvError naming the valid words."""
    levels: dict[str, int] = {}
    for word in (w.strip() for w in spec.replace(" ", ",").split(",")):
        if not word:
            continue
        debug, name = word.startswith("+"), word.lstrip("+").lower()
        level = logging.DEBUG if debug else logging.INFO
        if name in ("info", "debug", "all"):
            level = logging.DEBUG if name == "debug" or debug else logging.INFO
            levels.update({f"{ROOT}.{t}": level for t in TOPICS})
        elif name in TOPICS:
            levels[f"{ROOT}.{name}"] = level
        else:
            close = difflib.get_close_matches(name, ("info", "debug", "all", *TOPICS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise EnvError(
                f"irc: IRC_LOGS: unknown word {word!r}{hint}; use info, debug, or topics from {', '.join(TOPICS)} "
                "(+topic for debug)"
            )
    return levels


def configure(spec: str | None = None) -> None:
    """Apply IRC_LOGS (or `spec`): set the topics' levels and log them to stderr. Idempotent per spec;
    a malformed spec raises EnvError and changes nothing. Registers irc's names with torch's logging."""
    global _handler
    register_with_torch()
    spec = (env_get("IRC_LOGS") or "") if spec is None else spec
    if spec == _configured[0]:
        return
    levels = parse(spec)
    _configured[0] = spec
    while _ours:  # undo only what an earlier IRC_LOGS set: levels the application chose stay
        logging.getLogger(_ours.pop()).setLevel(logging.NOTSET)
    root = logging.getLogger(ROOT)
    if _handler is not None:  # an earlier IRC_LOGS's handler goes, and records propagate again
        root.removeHandler(_handler)
        _handler = None
        root.propagate = True
    if not levels:
        return
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
        _ours.append(name)
    _handler = _Stderr()
    _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    root.addHandler(_handler)
    root.propagate = False  # shown once, by our handler, not again by the application's root handlers


def register_with_torch() -> None:
    """Make `irc` and `irc_<topic>` names of TORCH_LOGS and torch._logging.set_logs (idempotent)."""
    from torch._logging._internal import log_registry, register_log

    if not log_registry.is_log(ROOT):
        register_log(ROOT, ROOT)
        for topic in TOPICS:
            register_log(f"{ROOT}_{topic}", f"{ROOT}.{topic}")


def torch_logging_hook() -> None:
    """The `torch.backends` entry point, called while torch is imported and before it parses TORCH_LOGS."""
    if env_get("TORCH_LOGS"):  # else torch would own irc's loggers (and their handlers) for nothing
        register_with_torch()


def stage(name: str) -> None:
    """Name the stage the compile running on this thread has reached (shown by its progress line)."""
    if (p := getattr(_current, "progress", None)) is not None:
        p.stage = name


class Progress:
    """`with Progress("graph 3 (forward)") as p: p.stage = "loop+mem"; ...`: after `delay` seconds, a line
    on stderr naming the current stage and the time so far (redrawn in place on a terminal, one line per
    stage otherwise), and a final line with the total. Silent for compiles faster than `delay`."""

    def __init__(self, what: str, *, delay: float = 1.0, interval: float = 0.5, stream=None):
        self.what, self.delay, self.interval = what, delay, interval
        self.stage = "import"
        self._stream = stream
        self._shown: str | None = None  # the last stage a line was written for
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._t0 = 0.0

    @property
    def stream(self):
        return self._stream or sys.stderr

    def enabled(self) -> bool:
        return env_get("IRC_PROGRESS")

    def __enter__(self):
        self._t0 = time.perf_counter()
        self._outer, _current.progress = getattr(_current, "progress", None), self
        if self.enabled():
            self._thread = threading.Thread(target=self._run, name="irc-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        _current.progress = self._outer
        self._done.set()
        if self.enabled():
            self._thread.join()
        with self._lock:
            if self._shown is not None:
                failed = " (failed)" if exc[0] is not None else ""
                self._write(f"irc: compiled {self.what} in {time.perf_counter() - self._t0:.1f} s{failed}", end=True)
        return False

    def _tty(self) -> bool:
        try:
            return self.stream.isatty()
        except (AttributeError, ValueError):
            return False

    def _write(self, text: str, end: bool = False) -> None:
        try:
            if self._tty():
                self.stream.write("\r\x1b[K" + text + ("\n" if end else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream: progress is not worth an error
            pass

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                stage = self.stage
                if self._tty() or stage != self._shown:
                    self._write(f"irc: compiling {self.what}: {stage} ... {time.perf_counter() - self._t0:.1f} s")
                self._shown = stage
            if self._done.wait(self.interval):
                return
