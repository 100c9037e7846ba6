"""Text in and out: parse MLIR source into a module, print a module back (pretty or generic)."""

import re
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
