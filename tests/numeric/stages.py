"""Run one program through tensor, loop and mem stages on the same inputs, comparing with eager after every pass.

    run_stages(fn, *inputs) -> StageRun   (raises AssertionError naming the pass whose result differs)

The program is traced with make_fx (fake tensors, the backend's decompositions) and imported as
the backend does, then lowered by the one driver (lowering/pipeline.run) with an instrument that runs
the loop-stage reference after every loop pass and the mem-stage reference after every mem pass. Outputs are compared with eager's results.
"""

from dataclasses import dataclass, field

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from irc.dialects import loop
from irc.frontend.decompositions import decomposition_table
from irc.frontend.fx_import import import_graph
from irc.ir import print_module
from irc.ir.passes import Instrument
from irc.lowering import pipeline
from irc.targets.reference import run_module
from irc.targets.reference.loop import run_loop_module
from irc.targets.reference.memory import run_mem_module


@dataclass
class StageRun:
    texts: dict[str, str] = field(default_factory=dict)  # pass name -> IR after it
    kernels: int = 0  # loop.nest ops at the end of the loop stage
    externs: int = 0
    module: object = None


def tolerances(t: torch.Tensor) -> dict:
    if t.dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 2e-2, "atol": 2e-2}
    if t.dtype == torch.float32:
        return {"rtol": 2e-5, "atol": 2e-5}
    return {}


def compare(got, want, where: str) -> None:
    got, want = list(got), [w for w in (want if isinstance(want, (tuple, list)) else [want])]
    assert len(got) == len(want), f"{where}: {len(got)} outputs, eager has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor):
            assert isinstance(g, torch.Tensor), f"{where}: output {i} is {type(g).__name__}"
            assert g.shape == w.shape, f"{where}: output {i} has shape {tuple(g.shape)}, eager {tuple(w.shape)}"
            assert g.dtype == w.dtype, f"{where}: output {i} has dtype {g.dtype}, eager {w.dtype}"
            torch.testing.assert_close(g, w, equal_nan=True, **tolerances(w), msg=lambda m: f"{where}: output {i}: {m}")
        else:
            assert g == w, f"{where}: output {i} is {g}, eager {w}"


def trace(fn, inputs, dynamic: bool = False):
    def call(*args):  # a plain signature for make_fx (F.silu and friends have extra keyword parameters)
        return fn(*args)

    gm = make_fx(call, tracing_mode="symbolic" if dynamic else "fake", decomposition_table=decomposition_table())(
        *inputs
    )
    return import_graph(gm)


def call_inputs(result, inputs) -> list:
    """The runtime arguments of @main: tensors, the SymInt sizes the graph takes, then the constants."""
    return [*inputs, *result.constants]


class _CompareAfterEach(Instrument):
    """After every loop and mem pass: the IR's text, and its result on the reference against eager's."""

    def __init__(self, args, result, want, texts: dict):
        self.args, self.result, self.want, self.texts = args, result, want, texts
        self.mem = {p.name for p in pipeline.Plan().stage_passes("mem")}

    def after(self, p, module) -> None:
        self.texts[p.name] = print_module(module)
        stage, runner = ("mem", run_mem_module) if p.name in self.mem else ("loop", run_loop_module)
        compare(_pick(runner(module, self.args), self.result), self.want, f"{stage} stage after {p.name}")


def run_stages(fn, *inputs, dynamic: bool = False, expect=None) -> StageRun:
    want = fn(*inputs) if expect is None else expect
    result = trace(fn, inputs, dynamic)
    module = result.module
    args = call_inputs(result, inputs)
    pipeline.run(module, stop="tensor-opt")
    compare(_pick(run_module(module, args), result), want, "tensor-opt")
    out = StageRun(module=module)

    def at_loop(stage, m):
        if stage == "loop":
            out.kernels = sum(isinstance(op, loop.NestOp) for op in m.walk())
            out.externs = sum(op.name.startswith("tn.") and op.name != "tn.dim" for op in m.walk())

    pipeline.run(
        module, start="tensor-opt", dump=at_loop, instruments=[_CompareAfterEach(args, result, want, out.texts)]
    )
    return out


def _pick(results, imported) -> list:
    """The graph's outputs from @main's results (constants the importer folded are taken as they are)."""
    results = list(results)
    return [results[v] if kind == "result" else v for kind, v in imported.outputs]


def non_contiguous(t: torch.Tensor) -> torch.Tensor:
    """The same values with every dim strided (a slice of a tensor twice as large along each dim)."""
    if t.dim() == 0:
        return t
    big = torch.zeros([2 * n for n in t.shape], dtype=t.dtype)
    view = big[tuple(slice(None, None, 2) for _ in t.shape)]
    view.copy_(t)
    assert not view.is_contiguous() or t.numel() <= 1
    return view


def as_function(model: torch.nn.Module):
    """(fn, state) with fn(*state, *inputs) == model(*inputs): parameters and buffers become graph inputs, as AOT autograd makes them."""
    state = dict(model.named_parameters(remove_duplicate=False)) | dict(model.named_buffers(remove_duplicate=False))
    names = list(state)

    def fn(*args):
        return torch.func.functional_call(model, dict(zip(names, args[: len(names)])), args[len(names) :])

    return fn, [t.detach() for t in state.values()]
