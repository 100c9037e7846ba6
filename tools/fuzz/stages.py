"""Every pass of the pipeline on one imported graph, checked: the result (the reference executors before and
after, on the same random inputs: ir/check.py's ResultCheck, as `irc-opt --verify-each`) and the text
(print, parse, print again gives the same text, from the custom syntax and from the generic one).
"""

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module, run_passes
from irc.ir.check import ResultMismatch
from irc.ir.passes import Instrument, pass_label


class StageFailure(Exception):
    def __init__(self, kind: str, message: str, stage: str, mlir: str, pass_: str | None = None):
        super().__init__(message)
        self.kind, self.stage, self.mlir, self.pass_ = kind, stage, mlir, pass_


def pipeline(module: ModuleOp) -> list[ModulePass]:
    """tensor -> tensor-opt -> loop -> mem, as the backend and irc-opt --stage mem run it on this module: the plan it
    records (compiler.plan_of; read at call time: tests may patch)."""
    from irc.compiler import plan_of

    return list(plan_of(module).passes())


def roundtrip(ctx, text: str, where: str) -> None:
    """Raise StageFailure unless `text` parses, verifies and prints back to itself (and so does its generic form)."""
    try:
        module = parse_module(ctx, text)
        module.verify()
    except Exception as e:
        raise StageFailure(
            "roundtrip", f"the IR {where} does not parse back: {type(e).__name__}: {_first_line(e)}", where, text
        ) from e
    again = print_module(module)
    if again != text:
        raise StageFailure("roundtrip", f"printing the IR {where} is not stable:\n{_diff(text, again)}", where, text)
    try:
        generic = print_module(parse_module(ctx, print_module(module, generic=True)))
    except Exception as e:
        raise StageFailure(
            "roundtrip",
            f"the generic form of the IR {where} does not parse back: {type(e).__name__}: {_first_line(e)}",
            where,
            text,
        ) from e
    if generic != text:
        raise StageFailure(
            "roundtrip",
            f"the generic form of the IR {where} reads back differently:\n{_diff(text, generic)}",
            where,
            text,
        )


class RoundTrip(Instrument):
    def __init__(self, ctx, checked: str = ""):
        self.ctx, self.checked = ctx, checked

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        text = print_module(module)
        if text != self.checked:  # most passes leave most programs as they were: their text round-tripped already
            roundtrip(self.ctx, text, f"after {pass_label(p)}")
            self.checked = text


class Before(Instrument):
    """The text before the running pass, for a pass that raises."""

    text, label = "", ""

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        self.text, self.label = print_module(module), pass_label(p)


def run_checked(tensor_text: str, *, seed: int = 0, given=()) -> int:
    """Run the whole pipeline on a tensor-stage module with both checks; the number of passes run.
    `given`: the arguments to check with (random where absent, as irc-opt --verify-each)."""
    from irc.targets.reference.check import reference_check

    ctx = make_context(ALL_DIALECTS)
    module = parse_module(ctx, tensor_text)
    text = print_module(module)
    roundtrip(ctx, text, "at the tensor stage")
    passes = pipeline(module)
    before = Before()
    check = reference_check(seed=seed, given=list(given or ()))
    try:
        run_passes(ctx, module, passes, instruments=[before, RoundTrip(ctx, text), check])
    except ResultMismatch as m:
        raise StageFailure(
            "pass-mismatch", str(m), f"before {pass_label(m.pass_)}", m.before, pass_label(m.pass_)
        ) from m
    except StageFailure:
        raise
    except Exception as e:
        raise StageFailure(
            "pass-crash",
            f"pass '{before.label}' raised {type(e).__name__}: {_first_line(e)}",
            f"before {before.label}",
            before.text,
            before.label,
        ) from e
    return len(passes)


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else ""


def _diff(a: str, b: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), "printed", "reprinted", n=1))[:2000]
