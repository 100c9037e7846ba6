"""Text in and out: parse MLIR source into a module, print a module back (pretty or generic); and a binary form
of a module (dump_module / load_module) for the disk cache, read back much faster than its text is parsed."""

import pickle
import re
import sys
import threading
from importlib.metadata import version
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer


# xDSL prints a float splat it cannot write in decimal (inf, nan) as its bit pattern, `dense<0xFF800000>`, as
# MLIR does, but parses that back as the integer 4286578688. Its parser reads bit patterns from a quoted hex
# string of little-endian bytes, so the printed form is rewritten into that before parsing.
_HEX_SPLAT = re.compile(r"dense<0x((?:[0-9a-fA-F]{4}){1,4})>")


def quote_hex_splats(source: str) -> str:
    """`dense<0xFF800000>` (a bit pattern) -> `dense<"0x0000807F">` (its bytes), which xDSL's parser reads right."""
    return _HEX_SPLAT.sub(_quote_hex_splat, source)


def _quote_hex_splat(m: re.Match) -> str:
    digits = m.group(1)
    if len(digits) not in (4, 8, 16):
        return m.group(0)
    return f'dense<"0x{bytes.fromhex(digits)[::-1].hex().upper()}">'


def parse_module(ctx: Context, source: str, name: str = "<input>") -> ModuleOp:
    """Parse `source`; raises xdsl's ParseError (which carries file:line:col) on bad input."""
    module = Parser(ctx, quote_hex_splats(source), name).parse_module()
    return module


def print_module(op: Operation, *, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue() + "\n"


# -- binary form ---------------------------------------------------------------------------------------
# A module pickles as its Python objects. Their links (each op to the next, each value to its uses) make
# pickle recurse as deep as the longest chain of ops, thousands of frames for a large graph: both directions
# run in a thread of their own with a stack (and a recursion limit) that holds that.
BINARY_VERSION = f"xdsl={version('xdsl')};python={sys.version_info[:2]};pickle={pickle.HIGHEST_PROTOCOL}"
_STACK_BYTES, _RECURSION = 1 << 29, 1_000_000


def _deep(fn):
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            out["error"] = e

    with _DEEP_LOCK:
        old = sys.getrecursionlimit()
        threading.stack_size(_STACK_BYTES)
        sys.setrecursionlimit(_RECURSION)
        try:
            worker = threading.Thread(target=run, name="irc-module-pickle")
            worker.start()
            worker.join()
        finally:
            sys.setrecursionlimit(old)
            threading.stack_size(0)
    if "error" in out:
        raise out["error"]
    return out["value"]


_DEEP_LOCK = threading.Lock()


def dump_module(module: ModuleOp) -> bytes:
    """The module as bytes for load_module (the same xDSL and Python only: BINARY_VERSION belongs in a cache key)."""
    return _deep(lambda: pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL))


def load_module(data: bytes) -> ModuleOp:
    """A module from dump_module's bytes. Unpickling runs code named by the data: only for bytes irc wrote itself
    (the disk cache, which also holds the machine code it runs, verifies every entry and its directory's owner)."""
    module = _deep(lambda: pickle.loads(data))
    if not isinstance(module, ModuleOp):
        raise TypeError(f"not a module: {type(module).__name__}")
    return module
