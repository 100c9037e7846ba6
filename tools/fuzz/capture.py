"""The graphs irc imports for a program, with the values each one runs on.

The program runs under torch.compile with AOT autograd, irc's decomposition table and irc's importer,
exactly as the backend builds the tensor stage; each graph then runs eagerly and its first call's
arguments (SymInts as ints) are kept, so the per-pass check runs every stage on sizes that agree
with each other, and on the program's own values (in-range indices, the sizes the fuzzer chose).
"""

from dataclasses import dataclass, field

import torch

from .programs import Program, load


@dataclass
class Captured:
    name: str  # forward, backward or inference, numbered in compile order
    text: str  # the tensor stage
    args: list | None = None  # the first call's arguments, then the graph's constants
    constants: list = field(default_factory=list)
    results: list | None = None  # what the FX graph returned for them, in the order of @main's results
    outputs: list = field(default_factory=list)  # the import's output map: ("result", i) or ("const", v)


def capture(p: Program) -> list[Captured]:
    from torch._dynamo.backends.common import aot_autograd

    from irc.compiler import record
    from irc.frontend.decompositions import decomposition_table
    from irc.frontend.fx_import import GraphUnsupported, import_graph
    from irc.ir import print_module
    from irc.options import Options
    from irc.targets.args import graph_args

    graphs: list[Captured] = []

    def compiler(kind: str):
        def compile_graph(gm: torch.fx.GraphModule, example_inputs):
            try:
                result = import_graph(gm)
            except GraphUnsupported:  # the backend runs such a graph eagerly: nothing of irc's to check
                result = None
            else:  # the plan the backend runs: the cpu target's rules over these arguments (compiler.record)
                placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
                record(result.module, graph_args(placeholders, result.constants), Options())
            g = Captured(
                f"graph{len(graphs)}-{kind}",
                print_module(result.module) if result else "",
                None,
                list(result.constants) if result else [],
                None,
                list(result.outputs) if result else [],
            )
            if result is not None:
                graphs.append(g)

            def run(args):
                first = g.args is None
                if first:
                    g.args = [_value(a) for a in args] + g.constants
                outs = gm.forward(*args)
                if first:
                    flat = list(outs) if isinstance(outs, (list, tuple)) else [outs]
                    g.results = [
                        _value(flat[j]) for j, (kind, _) in enumerate(g.outputs) if kind == "result" and j < len(flat)
                    ]
                return outs

            run._boxed_call = True
            return run

        return compile_graph

    backend = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(),
    )
    loaded = load(p)
    torch._dynamo.reset()
    compiled = torch.compile(loaded.fn, backend=backend)
    if p.training:
        from .oracle import gradients

        gradients(compiled, loaded.make_inputs())
    else:
        with torch.no_grad():
            compiled(*loaded.make_inputs())
    return graphs


def _value(a):
    if isinstance(a, torch.Tensor):
        return a.detach().clone()
    if isinstance(a, torch.SymInt):
        return int(a)
    return a
