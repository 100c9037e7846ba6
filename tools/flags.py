"""irc-opt's command line: xDSLOptMain's flags, irc's additions, and the examples `irc-opt --help` ends with."""

import argparse

EXAMPLES = """\
stages (in order): {stages}
  an .mlir input is at the stage its ops say (mem ops: mem, loop ops: loop, else tensor) unless
  --from-stage says otherwise; --stage NAME runs the passes of every later stage up to NAME and
  prints the IR there; -p PIPELINE then runs more passes. `irc-opt --list-passes` shows them all.
passes: {passes}

examples:
  irc-opt model.mlir                                   parse, verify and print (the tensor stage)
  irc-opt --stage loop model.mlir                      lower to the loop stage and print it
  cat model.mlir | irc-opt --stage tensor-opt          read stdin
  irc-opt -p 'cse,fuse-loops{{max-body-ops=8}}' in.mlir  run passes by name, with options
  irc-opt -p 'builtin.module(cse,dce)' model.mlir      the MLIR wrapper is accepted too
  irc-opt --stage mem --print-ir-after-all model.mlir  the IR after every pass (on stderr)
  irc-opt --stage mem --print-ir-after-change --print-ir-before=fuse-loops model.mlir
  irc-opt --stage mem --dump-dir dumps model.mlir      dumps/00-input.mlir, 01-cse.mlir, ...
  irc-opt --stage mem --timing --statistics model.mlir time per pass; rewrites per rule
  irc-opt --stage mem --verify-each model.mlir         run each pass's input and output on random
                                                       inputs; name the first pass that changes
                                                       the result and write a reproducer
  irc-opt --run-reproducer irc-opt-reproducer.mlir     replay it (exit code 1: still failing)
  irc-opt --split-input-file --verify-diagnostics bad.mlir
                                                       check errors against `// expected-error {{{{...}}}}`
  irc-opt --print-op-generic model.mlir                the generic form (irc-opt reads both)
  irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32
                                                       the tensor stage of each graph torch.compile
                                                       captures from the model the factory returns
  irc-opt --model my_models.py:build --inputs 8x3x32x32xf32 --stage fx
  irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32,8x64xf32 --dynamic --stage loop
  irc-opt -t llvm --stage mem model.mlir               target code (once the llvm/triton targets exist)
  irc-opt -t triton --arch sm_80,sm_90,gfx942 model.mlir
                                                       Triton kernels, each compiled for those GPUs (no
                                                       device needed): registers, spills, shared memory

exit codes: 0 success; 1 any error (located `file:line:col: error:` for bad IR, no traceback
unless --debug), a --verify-each mismatch, or a --verify-diagnostics mismatch.
"""


def _add(parser: argparse.ArgumentParser, *names: str, **kwargs) -> None:
    """Add an argument, replacing xDSL's argument of the same name (irc-opt gives it new meaning or aliases)."""
    containers = [parser, getattr(parser, "_optionals", parser)]  # a parser adds options through its _optionals group
    handlers = [c.conflict_handler for c in containers]
    for c in containers:
        c.conflict_handler = "resolve"
    try:
        parser.add_argument(*names, **kwargs)
    finally:
        for c, h in zip(containers, handlers):
            c.conflict_handler = h


def register(parser: argparse.ArgumentParser, stages: tuple[str, ...], passes: list[str], targets: list[str]) -> None:
    """Everything after xDSLOptMain's own flags (which are registered first)."""
    tn_stages = [s for s in stages if s != "fx"]
    _add(
        parser,
        "-p",
        "--passes",
        "--pass-pipeline",
        dest="passes",
        default="",
        metavar="PIPELINE",
        help="passes to run after the stage passes: `a,b{opt=1}` (a builtin.module(...) wrapper is accepted)",
    )
    _add(
        parser,
        "-t",
        "--emit",
        "--target",
        dest="target",
        default="mlir",
        choices=["mlir", *targets],
        metavar="TARGET",
        help=f"what to print: mlir (default) or target code ({', '.join(targets)}) generated from the mem stage",
    )
    parser.add_argument(
        "--arch",
        default=None,
        metavar="ARCH[,ARCH]",
        help="with -t triton: compile every kernel for these GPUs (sm_80, sm_90, gfx942; no device needed) "
        "and print its registers, spills and shared memory",
    )
    parser.add_argument(
        "--stage",
        choices=stages,
        default=None,
        metavar="NAME",
        help=f"stop after this stage and print it: {', '.join(stages)} (default: the input's stage)",
    )
    parser.add_argument(
        "--from-stage",
        choices=tn_stages,
        default=None,
        metavar="NAME",
        help="the stage the .mlir input is at (default: detected from its ops)",
    )
    _add(
        parser, "--shrink", action="store_true", help=argparse.SUPPRESS
    )  # xDSL's shrinkray hook: irc-opt raises no ShrinkException
    parser.add_argument(
        "--list-passes", action="store_true", help="list the stages, the passes and their options, and exit"
    )

    g = parser.add_argument_group("printing around passes (on stderr)")
    _add(
        g,
        "--print-ir-after-all",
        "--print-between-passes",
        dest="print_ir_after_all",
        action="store_true",
        help="print the IR after every pass",
    )
    g.add_argument("--print-ir-before-all", action="store_true", help="print the IR before every pass")
    g.add_argument(
        "--print-ir-before", action="append", default=[], metavar="PASS[,PASS]", help="print the IR before these passes"
    )
    g.add_argument(
        "--print-ir-after", action="append", default=[], metavar="PASS[,PASS]", help="print the IR after these passes"
    )
    g.add_argument(
        "--print-ir-after-change",
        action="store_true",
        help="print the IR after a pass only when the pass changed it (alone: after every pass that did)",
    )
    g.add_argument(
        "--print-ir-after-failure",
        action="store_true",
        help="print the IR a pass left when it fails (raises, leaves invalid IR, changes the result)",
    )
    g.add_argument("--dump-dir", metavar="DIR", help="write DIR/00-input.mlir and one numbered file per pass")
    _add(g, "--timing", "--time-passes", dest="timing", action="store_true", help="report the wall time of each pass")
    g.add_argument(
        "--statistics", action="store_true", help="report per pass the ops before/after and the rewrites per rule"
    )

    g = parser.add_argument_group("checking")
    g.add_argument(
        "--verify-each",
        action="store_true",
        help="after each pass, run the IR before and after it on the same random inputs (reference "
        "executors, f64 where possible); report the first pass that changes the result and write a reproducer",
    )
    g.add_argument("--seed", type=int, default=0, help="the seed of --verify-each's random inputs (default 0)")
    g.add_argument(
        "--reproducer",
        metavar="FILE",
        help="where --verify-each writes its reproducer (default: DUMP_DIR/reproducer.mlir or ./irc-opt-reproducer.mlir)",
    )
    g.add_argument(
        "--run-reproducer", metavar="FILE", help="replay a --verify-each reproducer; exit code 1 when it still fails"
    )
    _add(
        g,
        "--verify-diagnostics",
        dest="verify_diagnostics",
        action="store_true",
        help="check the errors against `// expected-error {{...}}` comments (@+N, @-N, @above, @below); exit 1 on a "
        "mismatch (an input without such comments: print each case's error, exit 0, as xdsl-opt does)",
    )

    g = parser.add_argument_group("torch models")
    g.add_argument(
        "--model",
        metavar="MODULE:FACTORY",
        help="capture a torch model: pkg.module:factory or file.py:factory; the factory returns an nn.Module or a callable of tensors",
    )
    g.add_argument(
        "--inputs",
        nargs="+",
        default=[],
        metavar="SHAPE",
        help="the model's inputs as shapes with an element type: 32x1024xf32 8xi64 f32 (or comma-separated)",
    )
    g.add_argument("--dynamic", action="store_true", help="with --model: compile with dynamic shapes")
    g.add_argument(
        "--backward", action="store_true", help="with --model: also run backward, capturing forward and backward graphs"
    )
    parser.add_argument(
        "--debug", "--traceback", dest="debug", action="store_true", help="show Python tracebacks of internal errors"
    )
