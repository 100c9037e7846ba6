"""Located diagnostics for irc-opt: parse with op positions, verify op by op, print `file:line:col: error: ...`.

xDSL's parser records no location for an op (unless the text carries `loc(...)`), and its verifier
raises without naming the op. `LocatingParser` remembers where each op starts, and `verify_located`
verifies innermost ops first (as xDSL does) so the first failure is attributed to its own op.
"""

import dataclasses
import math
import re
import struct

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer
from irc.ir.text import quote_hex_splats

Spans = dict[Operation, Span]
MAX_DENSE_ELEMENTS = 1 << 24  # elements of one dense literal (xDSL stores every element, splats too)

# xDSL 0.74's string-literal pattern nests `+` in `*`, so an unterminated literal (a `"` with no closing
# quote on its line) backtracks exponentially and irc-opt hangs. The same language, matched in linear time:
MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def format_located(span: Span, msg: str) -> str:
    """`file:line:col: error: msg`, then the source line with the span underlined (MLIR style)."""
    context = span.print_with_context().split("\n", 1)[1]  # drop xDSL's bare `file:line:col` line
    return f"{span.get_location()}: error: {msg}\n{context}"


class LocatedParseError(ParseError):
    """A ParseError printed as `file:line:col: error: msg` with the source line underneath."""

    def __str__(self) -> str:
        return format_located(self.span, self.msg)


class LocatedVerifyError(VerifyException):
    """A verifier failure attributed to the op (and its source position) that raised it."""

    def __init__(self, op: Operation, msg: str, span: Span | None):
        super().__init__(msg)
        self.op, self.msg, self.span = op, msg, span

    def __str__(self) -> str:
        if self.span is None:
            return f"<unknown>: error: {self.op.name}: {self.msg}"
        return format_located(self.span, self.msg)


class LocatingParser(Parser):
    """xDSL's Parser, also recording the span of each op's first line and of each value's first use."""

    def __init__(self, ctx: Context, text: str | bytes, name: str, spans: Spans):
        super().__init__(ctx, text, name)
        self.spans = spans
        self.first_use: dict[str, Span] = {}

    def parse_operation(self) -> Operation:
        first = self._current_token.span
        source = first.input
        try:
            op = super().parse_operation()
        except VerifyException as e:  # a declarative format checks its type constraints while parsing
            end = min(self.pos, source.get_end_of_line(first.start))
            raise ParseError(Span(first.start, max(end, first.end), source), " ".join(str(e).split())) from None
        end = min(self.pos, source.get_end_of_line(first.start))
        while end > first.end and source.content[end - 1] in " \t\r\n":
            end -= 1
        self.spans[op] = Span(first.start, max(end, first.end), source)
        return op

    def _parse_dense_literal_type(self):
        """xDSL expands a splat to every element: a huge dense literal would take the machine's memory (a hang)."""
        type = super()._parse_dense_literal_type()
        if (n := math.prod(type.get_shape())) > MAX_DENSE_ELEMENTS:
            self.raise_error(f"dense literal of {n} elements: irc-opt takes at most {MAX_DENSE_ELEMENTS}")
        return type

    def parse_dense_int_or_fp_elements_attr(self, type):
        """A value its element type cannot hold (3e5 as f16, 300 as i8) is an error at the literal, not xDSL's
        exception from packing it."""
        start = self._current_token.span.start
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)
        except (OverflowError, ValueError, struct.error) as e:
            self.raise_error(f"dense literal does not fit its element type ({e})", start, self.pos)

    def resolve_operand(self, operand, type):
        self.first_use.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)


def parse_located(
    ctx: Context, text: str | bytes, name: str, spans: Spans, *, implicit_module: bool = True
) -> ModuleOp:
    """Parse a module; a syntax error becomes a LocatedParseError pointing at the offending text."""
    try:
        text = quote_hex_splats(text.decode() if isinstance(text, bytes) else text)  # columns after one move by 2
        parser = LocatingParser(ctx, text, name, spans)  # lexes the first token: errors start here already
    except ParseError as e:
        raise LocatedParseError(e.span, e.msg.strip()) from None
    try:
        return parser.parse_module(implicit_module)
    except ParseError as e:
        span, msg = e.span, e.msg.strip()
        content = span.input.content
        undefined = [n for n in parser.forward_ssa_references if n in parser.first_use]
        if msg.startswith("values used but not defined") and undefined:
            span, msg = parser.first_use[undefined[0]], f"use of undefined value %{undefined[0]}"
        elif (m := re.fullmatch(r"Operation (\S+) is not registered", msg)) and (
            at := content.rfind(m[1], 0, span.start)
        ) >= 0:
            span = Span(at, at + len(m[1]), span.input)  # xDSL points after the name; point at the name
        elif span.start >= _end_of_code(content):  # ran off the end: point at the last code
            end = _end_of_code(content)
            span = Span(end, end, span.input)
            empty = msg == "Could not parse entire input!"  # xDSL's words for an input with no op at all
            msg = (
                "expected an operation, found end of input"
                if empty
                else "unexpected end of input" + (f" ({msg})" if msg else "")
            )
        raise LocatedParseError(span, msg) from None


def _end_of_code(content: str) -> int:
    """The position after the last character that is neither blank nor in a trailing `//` comment line."""
    lines = content.rstrip().split("\n")
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("//")):
        lines.pop()
    return len("\n".join(lines).rstrip())


def verify_located(op: Operation, spans: Spans, line_offset: int = 0) -> None:
    """Verify nested ops before their parent; raise LocatedVerifyError for the first op that fails."""
    if op.parent is None:
        _check_uses(op, set(), spans, line_offset)
    _verify_ops(op, spans, line_offset)


def _check_uses(op: Operation, visible: set, spans: Spans, line_offset: int) -> None:
    """Every operand of a single-block region's op is defined before it there or in an enclosing block (xDSL checks
    no dominance: a nest that yields a value of a later nest parsed, and bufferize's kernels then failed to verify)."""
    for region in op.regions:
        if len(region.blocks) != 1:
            continue  # a CFG region: dominance between its blocks is not checked here
        block = region.blocks[0]
        added = [*block.args]
        visible.update(added)
        for child in block.ops:
            for i, v in enumerate(child.operands):
                if v not in visible:
                    name = f"%{v.name_hint}" if v.name_hint else f"operand {i}"
                    raise _located(
                        child,
                        f"{child.name}: {name} is used where it is not defined (defined later, or "
                        "inside another op's region)",
                        spans,
                        line_offset,
                    )
            _check_uses(child, visible, spans, line_offset)
            visible.update(child.results)
            added.extend(child.results)
        visible.difference_update(added)


def _verify_ops(op: Operation, spans: Spans, line_offset: int) -> None:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                _verify_ops(child, spans, line_offset)
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as e:
        raise _located(op, str(e), spans, line_offset) from None
    except Exception as e:  # a verifier that crashes on bad input is an irc bug, but still a located error
        raise _located(op, f"{op.name}: verifier crashed ({type(e).__name__}: {e})", spans, line_offset) from None


def _located(op: Operation, msg: str, spans: Spans, line_offset: int) -> LocatedVerifyError:
    msg = " ".join(line.strip() for line in msg.strip().splitlines())
    if not msg.startswith(op.name):  # irc's verifiers name their op; xDSL's generic constraint messages do not
        msg = f"{op.name}: {msg}"
    span = spans.get(op)
    if span is not None:
        span = dataclasses.replace(span, line_offset=line_offset)
    return LocatedVerifyError(op, msg, span)
