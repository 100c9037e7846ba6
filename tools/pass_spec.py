"""Pass pipelines for irc-opt, with located errors.

    cse,dce                                  xDSL's flat syntax: passes in order, by name
    fuse-loops{max-body-ops=8},simplify-loop options in braces, `key=value` separated by spaces
    builtin.module(cse,dce)                  one MLIR-style wrapper is accepted (passes run on the module)

An unknown pass, a bad option or a syntax error is a PipelineError printed as
`<pass-pipeline>:1:COL: error: ...` with the pipeline underlined, and a note naming what exists.
"""

import dataclasses
import re
import typing
from collections.abc import Callable

from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, _convert_arg_to_type, _parse_spec
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.hints import type_repr
from xdsl.utils.lexer import Input, Span

from .diagnostics import format_located

PassFactory = Callable[[], type[ModulePass]]
SOURCE = "<pass-pipeline>"


class PipelineError(Exception):
    """A bad pass pipeline: the message, where in the pipeline text, and a note."""

    def __init__(self, text: str, start: int, end: int, msg: str, note: str | None = None):
        super().__init__(msg)
        self.text, self.start, self.end, self.msg, self.note = text, start, max(end, start), msg, note

    def __str__(self) -> str:
        located = format_located(Span(self.start, self.end, Input(self.text, SOURCE)), self.msg).rstrip()
        return located + (f"\nnote: {self.note}" if self.note else "")


def options_of(cls: type[ModulePass]) -> str:
    """`max-body-ops: int = 64, ...` (the spelling used in pipelines), or `no options`."""
    infos = get_pass_option_infos(cls)
    if not infos:
        return "no options"
    return ", ".join(
        f"{i.name.replace('_', '-')}: {i.expected_type}"
        + (f" = {i.default_value}" if i.default_value is not None else "")
        for i in infos
    )


def _unwrap(text: str) -> tuple[str, int]:
    """The pipeline inside an optional `builtin.module(...)`, and where it starts in `text`."""
    m = re.fullmatch(r"\s*builtin\.module\s*\((.*)\)\s*", text, re.S)
    if m is None:
        return text, 0
    inner = m[1]
    if (nested := re.search(r"[\w.]+\s*\(", inner)) is not None:
        at = m.start(1) + nested.start()
        raise PipelineError(
            text,
            at,
            at + len(nested[0]),
            "nested pass pipelines are not supported (every irc pass runs on the whole module)",
        )
    return inner, m.start(1)


def _syntax_error(text: str, offset: int, e: ArgSpecParseError) -> PipelineError:
    m = re.search(r"pass-pipeline:\d+:(\d+)\n[^\n]*\n *(\^*)\n\s*(.*)", str(e))
    if m is None:
        return PipelineError(text, offset, offset, str(e).splitlines()[-1].strip())
    start = offset + int(m[1]) - 1
    return PipelineError(text, start, start + len(m[2]), m[3].strip())


def parse_pipeline(text: str, available: dict[str, PassFactory]) -> tuple[ModulePass, ...]:
    """The passes a pipeline names, with their options; raises PipelineError."""
    inner, offset = _unwrap(text)
    lexer = PipelineLexer(inner)
    passes: list[ModulePass] = []
    try:
        while lexer.peek().kind is not SpecTokenKind.EOF:
            token = lexer.peek()
            start = offset + token.span.start
            spec = _parse_spec(lexer)
            end = offset + (lexer.peek().span.start if lexer.peek().kind is not SpecTokenKind.EOF else len(inner))
            passes.append(_instantiate(text, start, end, spec, available))
            sep = lexer.lex()
            if sep.kind is SpecTokenKind.EOF:
                break
            if sep.kind is not SpecTokenKind.COMMA:
                at = offset + sep.span.start
                raise PipelineError(text, at, at + 1, "expected `,` between passes")
    except ArgSpecParseError as e:
        raise _syntax_error(text, offset, e) from None
    return tuple(passes)


def _instantiate(text: str, start: int, end: int, spec: ArgSpec, available: dict[str, PassFactory]) -> ModulePass:
    if spec.name not in available:
        raise PipelineError(
            text,
            start,
            start + len(spec.name),
            f"unknown pass '{spec.name}'",
            f"available passes: {', '.join(available)}",
        )
    cls = available[spec.name]()
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    params = spec.normalize_parameter_names().parameters
    note = f"options of '{spec.name}': {options_of(cls)}"
    hints = typing.get_type_hints(cls)
    for key, value in params.items():
        name = key.replace("_", "-")
        at = text.find(name, start, end)
        at = at if at >= 0 else start
        if key not in fields:
            raise PipelineError(text, at, at + len(name), f"pass '{spec.name}' has no option '{name}'", note)
        try:
            _convert_arg_to_type(value, hints[key])
        except ValueError:
            given = ",".join(map(str, value)) if value else "nothing"
            raise PipelineError(
                text,
                at,
                at + len(name),
                f"option '{name}' of pass '{spec.name}' expects {type_repr(hints[key])}, got {given}",
                note,
            ) from None
    try:
        return cls.from_spec(spec)
    except (ValueError, TypeError) as e:
        brace = text.find("{", start, end)
        at = brace if brace >= 0 else start
        raise PipelineError(text, at, end, f"pass '{spec.name}': {e}", note) from None


def pass_names(text: str, available: dict[str, PassFactory], flag: str) -> list[str]:
    """`--print-ir-before=cse,dce`: the names, each a registered pass (else a usage error naming the flag)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in available:
            raise ValueError(f"{flag}: unknown pass '{n}' (available passes: {', '.join(available)})")
    return names
