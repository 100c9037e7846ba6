"""irc-opt: mlir-opt for irc, on xDSL's xDSLOptMain: any stage of the pipeline, for MLIR text or a torch model.

    irc-opt input.mlir                                   parse, verify, print
    irc-opt --stage loop input.mlir                      run the passes that produce a stage
    irc-opt --stage mem --verify-each input.mlir         and check every pass on random inputs
    irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32

xDSLOptMain parses the command line, reads and splits the input, and prints; irc-opt adds stages,
located pass pipelines, pass instruments (tools/instruments.py: IR printing, dumps, timing,
statistics), --verify-each with reproducers, mlir-opt's --verify-diagnostics, and --model.
Every error is `file:line:col: error: ...` or `irc-opt: error: ...` on stderr with exit code 1;
a Python traceback appears only with --debug. `irc-opt --help` lists every flag with examples.
"""

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from irc.ir.check import ResultMismatch
from irc.ir.passes import Instrument, pass_label, run_passes
from irc.ir.text import print_module

from . import expected, flags, reproducer
from .diagnostics import Spans, parse_located, verify_located
from .emit import EMIT_STAGE, EMITTERS, TargetUnavailable, emitter
from .instruments import DumpDir, PrintIR, Statistics, Timing
from .pass_spec import PipelineError, parse_pipeline, pass_names
from .stages import detect_stage, list_passes, stage_passes


class UsageError(Exception):
    """A bad command line or request; printed as `irc-opt: error: ...`, exit code 1."""


class Failed(Exception):
    """irc-opt already printed why it fails (diagnostic mismatches, a --verify-each mismatch); exit code 1."""


def _usage_error(message: str) -> NoReturn:
    raise UsageError(message)


class _Current(Instrument):
    """Which pass is running and which ran last, for error messages."""

    def __init__(self, opt: "IrcOptMain"):
        self.opt = opt

    def before(self, p, module):
        self.opt.last_pass, self.opt.current_pass = self.opt.current_pass, p

    def after(self, p, module):
        self.opt.last_pass, self.opt.current_pass = p, None


class IrcOptMain(xDSLOptMain):
    """xDSLOptMain with irc's dialects, passes and stages, pass instruments, --verify-each and --model."""

    version_format = "irc-opt (irc on xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self.spans: Spans = {}
        self.chunk_offset = 0
        self.last_pass: ModulePass | None = None  # the pass that ran last, and the one running (for messages)
        self.current_pass: ModulePass | None = None
        self.module_label: str | None = None  # "chunk-2", "graph-0" when the input holds several modules
        self.replay: reproducer.Reproducer | None = None
        super().__init__(
            description="irc-opt: print, transform and check irc IR at any stage of the pipeline.", args=args
        )

    # -- registration ------------------------------------------------------------------------------------
    def register_all_dialects(self):
        from irc.dialects import ALL_DIALECTS
        from irc.ir.context import BASE_DIALECTS

        for dialect in (*BASE_DIALECTS, *ALL_DIALECTS):
            self.ctx.load_dialect(dialect)

    def register_all_passes(self):
        from irc.lowering import PASSES

        from .test_passes import TEST_PASSES

        for name, p in (*PASSES.items(), *TEST_PASSES.items()):
            self.register_pass(name, lambda p=p: type(p))

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets = {"mlir": self.available_targets["mlir"]}
        for name in EMITTERS:  # old-style target: (module, output) -> None
            self.available_targets[name] = lambda module, out, name=name: out.write(
                emitter(name, self.args.arch)(module)
            )

    def register_all_frontends(self):
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            return self.parse_text(io.read(), self.get_input_name())

        self.available_frontends["mlir"] = parse_mlir

    def register_all_arguments(self, arg_parser):
        import argparse

        from irc.lowering import STAGE_ORDER

        arg_parser.prog = "irc-opt"
        arg_parser.error = _usage_error  # bad flags: our message, exit 1 (argparse would exit 2)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = flags.EXAMPLES.format(
            stages=", ".join(STAGE_ORDER), passes=", ".join(self.available_passes)
        )
        super().register_all_arguments(arg_parser)
        flags.register(arg_parser, STAGE_ORDER, list(self.available_passes), list(EMITTERS))

    # -- the command line --------------------------------------------------------------------------------
    def setup_pipeline(self):
        a = self.args
        if a.input_file == "-":
            a.input_file = None  # `-` is stdin, as for mlir-opt
        if a.model is None and (a.inputs or a.dynamic or a.backward):
            _usage_error("--inputs, --dynamic and --backward need --model")
        if a.model is not None and (a.input_file is not None or a.run_reproducer):
            _usage_error("give one input: a file, --model or --run-reproducer")
        if a.run_reproducer:
            if a.input_file is not None or a.passes or a.stage or a.from_stage:
                _usage_error(
                    "--run-reproducer FILE replays the pass its file names on the IR it holds: give no input, -p or stage"
                )
            try:
                self.replay = reproducer.read(a.run_reproducer)
            except reproducer.ReproducerError as e:
                _usage_error(str(e))
            a.passes, a.seed, a.verify_each, a.input_file = (
                self.replay.pass_spec,
                self.replay.seed,
                True,
                a.run_reproducer,
            )
        if a.target != "mlir" or a.arch:
            try:
                emitter(a.target, a.arch)
            except TargetUnavailable as e:
                _usage_error(str(e))
            if a.stage not in (None, EMIT_STAGE):
                _usage_error(
                    f"-t {a.target} prints code generated from the {EMIT_STAGE} stage, not from --stage {a.stage}"
                )
        self.pipeline = PassPipeline(parse_pipeline(a.passes, self.available_passes))  # raises PipelineError
        try:
            self.print_before = [
                n for s in a.print_ir_before for n in pass_names(s, self.available_passes, "--print-ir-before")
            ]
            self.print_after = [
                n for s in a.print_ir_after for n in pass_names(s, self.available_passes, "--print-ir-after")
            ]
        except ValueError as e:
            _usage_error(str(e))
        self.timing = Timing() if a.timing else None
        self.statistics = Statistics() if a.statistics else None

    # -- input -------------------------------------------------------------------------------------------
    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.stage == "fx" and self.args.model is None:
            _usage_error("--stage fx needs --model (an .mlir input starts at a tn stage)")
        if self.args.input_file is not None:
            try:
                f = open(self.args.input_file, "rb")
            except OSError as e:
                _usage_error(f"cannot read {self.args.input_file!r}: {e.strerror}")
            return f, "mlir"  # whatever the extension: irc-opt reads MLIR text
        return super().get_input_stream()

    def parse_text(self, text: str | bytes, name: str) -> ModuleOp:
        """Parse, then verify op by op so a verifier error names its op's file:line:col."""
        self.spans.clear()
        self.last_pass = self.current_pass = None
        t0 = time.perf_counter()
        module = parse_located(self.ctx, text, name, self.spans, implicit_module=not self.args.no_implicit_module)
        if not self.args.disable_verify:
            verify_located(module, self.spans, self.chunk_offset)
        if self.timing:
            self.timing.add("(parse)", time.perf_counter() - t0)
        return module

    # -- running the passes --------------------------------------------------------------------------------
    def passes_for(self, module: ModuleOp) -> tuple[ModulePass, ...]:
        a = self.args
        start = self.model_stage() if a.model else (a.from_stage or detect_stage(module))
        stop = a.stage or (EMIT_STAGE if a.target != "mlir" else start)
        self.reached = stop if stop != start else None  # the stage the module is at after the stage passes
        try:
            return (*stage_passes(module, start, stop), *self.pipeline.passes)
        except ValueError as e:
            _usage_error(str(e))

    def render(self, module: ModuleOp) -> str:
        return print_module(module, generic=self.args.print_op_generic)

    def verify_module(self, module: ModuleOp) -> None:
        t0 = time.perf_counter()
        verify_located(module, self.spans, self.chunk_offset)  # ops kept from the input keep their location
        if self.timing:
            self.timing.add("(verifier)", time.perf_counter() - t0)

    def apply_passes(self, module: ModuleOp):
        a = self.args
        passes = self.passes_for(module)
        instruments: list[Instrument] = [_Current(self)]
        check = None
        if a.verify_each:
            from irc.targets.reference.check import reference_check

            check = reference_check(seed=a.seed)
            instruments.append(check)
        printing = a.print_ir_after_all or a.print_ir_before_all or a.print_ir_after_change or a.print_ir_after_failure
        if printing or self.print_before or self.print_after:
            instruments.append(
                PrintIR(
                    self.render,
                    sys.stderr,
                    before=self.print_before,
                    after=self.print_after,
                    before_all=a.print_ir_before_all,
                    after_all=a.print_ir_after_all,
                    after_change=a.print_ir_after_change,
                    after_failure=a.print_ir_after_failure,
                )
            )
        if a.dump_dir:
            dump = DumpDir(Path(a.dump_dir) / (self.module_label or ""), self.render)
            dump.start(module)
            instruments.append(dump)
        for report in (self.statistics, self.timing):  # the timer last: closest to the pass
            if report is not None:
                report.start()
                instruments.append(report)
        verify = None if a.disable_verify else self.verify_module
        try:
            run_passes(self.ctx, module, passes, verify=verify, instruments=instruments)
            if self.reached is not None:
                from irc.lowering.pipeline import mark_stage

                mark_stage(module, self.reached)
        except ResultMismatch as m:
            self.verify_each_failed(m, module)
        finally:
            if check is not None:
                self.report_unchecked(check.unchecked)

    @staticmethod
    def report_unchecked(unchecked: list[tuple[str, str, str]]) -> None:
        """One note per function and reason: which passes --verify-each could not check."""
        groups: dict[tuple[str, str], list[str]] = {}
        for name, entry, why in unchecked:
            groups.setdefault((entry, why), []).append(name)
        for (entry, why), names in groups.items():
            print(
                f"irc-opt: note: --verify-each did not check @{entry} around {', '.join(names)}: "
                f"it does not run on random inputs ({why})",
                file=sys.stderr,
            )

    def verify_each_failed(self, m: ResultMismatch, module: ModuleOp) -> NoReturn:
        a = self.args
        if a.print_ir_after_failure:
            sys.stderr.write(
                f"// -----// IR Dump After {pass_label(m.pass_)} Failed //----- //\n{self.render(module)}\n"
            )
        if self.replay is not None:
            print(f"irc-opt: error: reproduced: {m}", file=sys.stderr)
            raise Failed()
        path = Path(a.reproducer or (Path(a.dump_dir) / "reproducer.mlir" if a.dump_dir else "irc-opt-reproducer.mlir"))
        reproducer.write(path, m)
        where = f" ({self.module_label})" if self.module_label else ""
        print(
            f"irc-opt: error: --verify-each{where}: {m}\nnote: the IR before the pass, the pass and the seed are in {path}; "
            f"replay with: irc-opt --run-reproducer {path}",
            file=sys.stderr,
        )
        raise Failed()

    def output(self, module: ModuleOp, out: IO[str]) -> None:
        t0 = time.perf_counter()
        out.write(self.output_resulting_program(module))
        out.flush()
        if self.timing:
            self.timing.add("(output)", time.perf_counter() - t0)

    # -- running -------------------------------------------------------------------------------------------
    def run(self):
        if self.args.list_passes:
            sys.stdout.write(list_passes(self.available_passes))
            return
        out = self.prepare_output()
        try:
            if self.args.model is not None:
                self.run_model(out)
            else:
                self.run_input(out)
            if self.replay is not None:
                print(
                    f"irc-opt: the reproducer did not fail: pass '{self.replay.pass_spec}' keeps the result (seed {self.replay.seed})",
                    file=sys.stderr,
                )
        finally:
            if out is not sys.stdout:
                out.close()
            for report in (self.timing, self.statistics):
                if report is not None and report.rows:
                    report.report(sys.stderr)

    def run_input(self, out: IO[str]) -> None:
        a = self.args
        chunks, _ = self.prepare_input()
        texts = []
        for chunk, offset in chunks:
            text = chunk.read()
            chunk.close()
            texts.append((text.decode() if isinstance(text, bytes) else text, offset))
        # --verify-diagnostics on a file without expected-error comments keeps xDSL's meaning: print each error, exit 0
        check_expected = a.verify_diagnostics and any(expected.EXPECTED.search(t) for t, _ in texts)
        problems: list[str] = []
        for i, (text, offset) in enumerate(texts):
            if i:
                out.write("// -----\n")
            self.chunk_offset = offset
            self.module_label = f"chunk-{i + 1}" if len(texts) > 1 else None
            error = None
            try:
                module = self.parse_text(text, self.get_input_name())
                self.apply_passes(module)
                self.output(module, out)
            except (ParseError, DiagnosticException) as e:
                if isinstance(e, ParseError):
                    e.span = dataclasses.replace(e.span, line_offset=offset)
                if not (a.verify_diagnostics or (a.parsing_diagnostics and isinstance(e, ParseError))):
                    raise
                if not check_expected:
                    print(e)  # xDSL's --parsing-diagnostics / --verify-diagnostics: print the error, go on, exit 0
                error = e
            if check_expected:
                problems += expected.check(self.get_input_name(), text, offset, error)
        if problems:
            sys.stderr.write("\n".join(problems) + "\n")
            raise Failed()

    def run_model(self, out: IO[str]) -> None:
        from .model import capture

        a = self.args
        graphs = capture(self.ctx, a.model, a.inputs, dynamic=a.dynamic, backward=a.backward)
        if not graphs:
            raise UsageError(f"--model {a.model}: torch.compile captured no graph")
        flags_ = "".join(f" --{f}" for f in ("dynamic", "backward") if getattr(a, f))
        header = f"// irc-opt --model {a.model} --inputs {' '.join(a.inputs) or '(none)'}{flags_} --stage {a.stage or 'tensor'}\n"
        for i, g in enumerate(graphs):
            if i:
                out.write("// -----\n")
            out.write(header)
            out.write("".join(f"// {line}\n" for line in (g.title, *g.notes)))
            if a.stage == "fx":
                out.write("".join(f"// {line}\n" for line in g.stages.get("fx", "").splitlines()))
            elif (stage := self.model_stage()) in g.stages:  # the backend's own dump: exactly what it compiled
                self.chunk_offset = 0
                self.module_label = f"graph-{g.index}" if len(graphs) > 1 else None
                module = self.parse_text(g.stages[stage], f"<graph {g.index}>")
                self.apply_passes(module)
                self.output(module, out)
            else:
                out.write(f"// the backend did not reach the {stage} stage for this graph\n")

    def model_stage(self) -> str:
        """The stage --model prints: --stage (the code generators' stage for -t), taken from the backend's dumps."""
        a = self.args
        return a.stage or (EMIT_STAGE if a.target != "mlir" else "tensor")


def main(argv: Sequence[str] | None = None) -> int:
    """The `irc-opt` console script; returns the exit code (0 ok, 1 any error)."""
    post_init = Attribute.__post_init__  # --disable-verify and --syntax-highlight patch xDSL globally:
    colored = Diagnostic.colored  # undo both when done, for in-process use (tests)
    opt = None
    try:
        opt = IrcOptMain(args=argv)
        opt.run()
        return 0
    except SystemExit as e:  # --help and --version exit 0 from argparse
        return e.code if isinstance(e.code, int) else 0
    except BrokenPipeError:  # `irc-opt ... | head`: the reader left; stop quietly
        sys.stdout = open(os.devnull, "w")
    except Failed:
        pass
    except UsageError as e:
        print(f"irc-opt: error: {e}\nrun `irc-opt --help` for usage", file=sys.stderr)
    except (ParseError, PipelineError) as e:  # LocatedParseError; a bad -p pipeline
        print(str(e).rstrip(), file=sys.stderr)
    except DiagnosticException as e:  # LocatedVerifyError, or IR that a pass left invalid
        print(_diagnostic(opt, e), file=sys.stderr)
    except Exception as e:
        if opt is not None and opt.args.debug or opt is None and argv is not None and "--debug" in argv:
            raise
        from .model import ModelError

        if isinstance(e, ModelError):
            print(f"irc-opt: error: {e}", file=sys.stderr)
        else:
            where = f" in pass {opt.current_pass.name!r}" if opt is not None and opt.current_pass else ""
            print(
                f"irc-opt: internal error{where}: {type(e).__name__}: {e}\n(rerun with --debug for the traceback)",
                file=sys.stderr,
            )
    finally:
        Attribute.__post_init__, Diagnostic.colored = post_init, colored
    return 1


def _diagnostic(opt: IrcOptMain | None, e: DiagnosticException) -> str:
    from .diagnostics import LocatedVerifyError

    text = str(e).rstrip() if isinstance(e, LocatedVerifyError) else f"<unknown>: error: {e}"
    failing = opt.current_pass if opt is not None else None
    if failing is not None:
        text += f"\nnote: the IR verified before pass {failing.name!r}, which left it invalid"
    return text


if __name__ == "__main__":
    sys.exit(main())
