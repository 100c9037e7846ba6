"""irc-opt: print any stage of irc's pipeline, for MLIR text or for a torch model; built on xDSL's xDSLOptMain.

    irc-opt input.mlir                                   # parse, verify, print (the `tensor` stage)
    irc-opt --stage tensor-opt input.mlir                # run the passes that produce a stage
    irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32

Everything xDSLOptMain offers stays available (`-p` pass pipelines, `--split-input-file`,
`--verify-diagnostics`, `--print-op-generic`, `-o`, ...): stage passes run first, then `-p`.
Malformed input gets `file:line:col: error: ...` on stderr and exit code 1, never a traceback.
"""

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from .diagnostics import Spans, parse_located, verify_located

INPUT_STAGE = "tensor"  # what an .mlir file holds unless --from-stage says otherwise

EXAMPLES = """\
stages (in order): {stages}
  an .mlir input is taken to be at --from-stage (default tensor); --stage NAME runs the
  passes of every later stage up to NAME; -p PASSES then runs more passes by name.
passes: {passes}

examples:
  irc-opt model.mlir                                   parse, verify and print the tensor stage
  irc-opt --stage tensor-opt model.mlir                run the tensor-opt passes, print the result
  cat model.mlir | irc-opt --stage tensor-opt          read stdin
  irc-opt -p cse,dce model.mlir                        run passes by name
  irc-opt --split-input-file --verify-diagnostics bad.mlir
                                                       print each case's error, exit 0
  irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32
                                                       the tensor stage of each graph torch.compile
                                                       captures from the model the factory returns
  irc-opt --model my_models.py:build --inputs 8x3x32x32xf32 --stage fx
  irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32,8x64xf32 --dynamic
"""


class UsageError(Exception):
    """A bad command line; printed as `irc-opt: error: ...`, exit code 1."""


def _usage_error(message: str) -> NoReturn:
    raise UsageError(message)


class IrcOptMain(xDSLOptMain):
    """xDSLOptMain with irc's dialects, irc's passes (irc.lowering.PASSES), stages and --model input."""

    version_format = "irc-opt (irc on xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self.spans: Spans = {}
        self.chunk_offset = 0
        self.last_pass: ModulePass | None = None  # the pass that ran last, and the one running (for messages)
        self.current_pass: ModulePass | None = None
        super().__init__(description="irc-opt: print and transform irc IR at any stage of the pipeline.", args=args)

    # -- registration (what later pass pipelines, print-ir-after-all, verify-each build on) --------------
    def register_all_dialects(self):
        from irc.dialects import ALL_DIALECTS
        from irc.ir.context import BASE_DIALECTS

        for dialect in (*BASE_DIALECTS, *ALL_DIALECTS):
            self.ctx.load_dialect(dialect)

    def register_all_passes(self):
        from irc.lowering import PASSES

        for name, p in PASSES.items():
            self.register_pass(name, lambda p=p: type(p))

    def register_all_frontends(self):
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            return self.parse_text(io.read(), self.get_input_name())

        self.available_frontends["mlir"] = parse_mlir

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        from irc.lowering import PASSES, STAGE_ORDER

        arg_parser.prog = "irc-opt"
        arg_parser.error = _usage_error  # bad flags: our message, exit 1 (argparse would exit 2)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = EXAMPLES.format(stages=", ".join(STAGE_ORDER), passes=", ".join(PASSES) or "(none)")
        super().register_all_arguments(arg_parser)
        stages = [s for s in STAGE_ORDER if s != "fx"]
        arg_parser.add_argument("--stage", choices=STAGE_ORDER, default=INPUT_STAGE, metavar="NAME",
                                help=f"print the IR at this stage: {', '.join(STAGE_ORDER)} (default: {INPUT_STAGE})")
        arg_parser.add_argument("--from-stage", choices=stages, default=INPUT_STAGE, metavar="NAME",
                                help=f"the stage the .mlir input is at (default: {INPUT_STAGE})")
        arg_parser.add_argument("--model", metavar="MODULE:FACTORY",
                                help="capture a torch model: pkg.module:factory or file.py:factory; "
                                "the factory returns an nn.Module or a callable of tensors")
        arg_parser.add_argument("--inputs", nargs="+", default=[], metavar="SHAPE",
                                help="the model's inputs as shapes with an element type: 32x1024xf32 8xi64 f32")
        arg_parser.add_argument("--dynamic", action="store_true", help="with --model: compile with dynamic shapes")
        arg_parser.add_argument("--backward", action="store_true",
                                help="with --model: also run backward, capturing forward and backward graphs")
        arg_parser.add_argument("--traceback", action="store_true", help="re-raise internal errors (for debugging irc)")

    # -- the pipeline: stage passes, then -p passes --------------------------------------------------------
    def setup_pipeline(self):
        args = self.args
        if args.input_file == "-":
            args.input_file = None  # `-` is stdin, as for mlir-opt
        if args.model is None and (args.inputs or args.dynamic or args.backward):
            _usage_error("--inputs, --dynamic and --backward need --model")
        if args.model is not None and args.input_file is not None:
            _usage_error("give either an input file or --model, not both")
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as e:
            _usage_error(f"argument -p/--passes: {e}")
        user_callback = self.pipeline.callback

        def callback(previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
            self.last_pass, self.current_pass = previous, next_pass
            if previous is not None and not args.disable_verify:
                verify_located(module, self.spans, self.chunk_offset)  # ops kept from the input keep their location
            if user_callback is not None:
                user_callback(previous, module, next_pass)

        passes = () if args.stage == "fx" else self.stage_passes(INPUT_STAGE if args.model else args.from_stage, args.stage)
        self.pipeline = PassPipeline((*passes, *self.pipeline.passes), callback)

    @staticmethod
    def stage_passes(start: str, stop: str) -> tuple[ModulePass, ...]:
        """The passes that take IR at stage `start` to stage `stop`."""
        from irc.lowering import STAGE_ORDER, STAGES

        i, j = STAGE_ORDER.index(start), STAGE_ORDER.index(stop)
        if j < i:
            _usage_error(f"--stage {stop} comes before the input's stage {start} (stages: {', '.join(STAGE_ORDER)})")
        return tuple(p for stage in STAGE_ORDER[i + 1 : j + 1] for p in STAGES.get(stage, ()))

    # -- input -------------------------------------------------------------------------------------------------
    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.stage == "fx":
            _usage_error("--stage fx needs --model (an .mlir input starts at a tn stage)")
        if self.args.input_file is not None:
            try:
                f = open(self.args.input_file, "rb")
            except OSError as e:
                _usage_error(f"cannot read {self.args.input_file!r}: {e.strerror}")
            return f, "mlir"  # whatever the extension: irc-opt reads MLIR text
        return super().get_input_stream()

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        self.chunk_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def parse_text(self, text: str | bytes, name: str) -> ModuleOp:
        """Parse, then verify op by op so a verifier error names its op's file:line:col."""
        self.spans.clear()
        self.last_pass = self.current_pass = None
        module = parse_located(self.ctx, text, name, self.spans, implicit_module=not self.args.no_implicit_module)
        if not self.args.disable_verify:
            verify_located(module, self.spans, self.chunk_offset)
        return module

    # -- running -----------------------------------------------------------------------------------------------
    def run(self):
        if self.args.model is None:
            return super().run()
        from .model import capture

        graphs = capture(self.ctx, self.args.model, self.args.inputs, dynamic=self.args.dynamic, backward=self.args.backward)
        if not graphs:
            raise UsageError(f"--model {self.args.model}: torch.compile captured no graph")
        out = self.prepare_output()
        flags = "".join(f" --{f}" for f in ("dynamic", "backward") if getattr(self.args, f))
        header = f"// irc-opt --model {self.args.model} --inputs {' '.join(self.args.inputs) or '(none)'}{flags} --stage {self.args.stage}\n"
        try:
            for i, g in enumerate(graphs):
                if i:
                    out.write("// -----\n")
                out.write(header)
                out.write("".join(f"// {line}\n" for line in (g.title, *g.notes)))
                if self.args.stage == "fx":
                    out.write("".join(f"// {line}\n" for line in g.stages.get("fx", "").splitlines()))
                elif INPUT_STAGE in g.stages:
                    self.chunk_offset = 0
                    module = self.parse_text(g.stages[INPUT_STAGE], f"<graph {g.index}>")
                    self.apply_passes(module)
                    out.write(self.output_resulting_program(module))
        finally:
            if out is not sys.stdout:
                out.close()


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
    except UsageError as e:
        print(f"irc-opt: error: {e}\nrun `irc-opt --help` for usage", file=sys.stderr)
    except ParseError as e:  # LocatedParseError, and xDSL's own from -p option parsing
        print(str(e).rstrip(), file=sys.stderr)
    except DiagnosticException as e:  # LocatedVerifyError, or IR that a pass left invalid
        print(_diagnostic(opt, e), file=sys.stderr)
    except Exception as e:
        if opt is not None and opt.args.traceback:
            raise
        from .model import ModelError

        if isinstance(e, ModelError):
            print(f"irc-opt: error: {e}", file=sys.stderr)
        else:
            where = f" in pass {opt.current_pass.name!r}" if opt is not None and opt.current_pass else ""
            print(f"irc-opt: internal error{where}: {type(e).__name__}: {e}\n(rerun with --traceback for details)", file=sys.stderr)
    finally:
        Attribute.__post_init__, Diagnostic.colored = post_init, colored
    return 1


def _diagnostic(opt: IrcOptMain | None, e: DiagnosticException) -> str:
    from .diagnostics import LocatedVerifyError

    text = str(e).rstrip() if isinstance(e, LocatedVerifyError) else f"<unknown>: error: {e}"
    if opt is not None and opt.last_pass is not None:
        text += f"\nnote: the IR verified before pass {opt.last_pass.name!r}, which left it invalid"
    return text


if __name__ == "__main__":
    sys.exit(main())
