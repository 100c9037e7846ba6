"""Inference freezing (option `freeze`): parameters and buffers become compile-time constants of inference graphs.

How parameters reach irc: Dynamo lifts each parameter and buffer of the modules it traces to an input of
its graph, marks it static (`_dynamo_static_input_type`, or an nn.Parameter) and hands the backend the real
tensors as example inputs; for an inference graph (run under torch.no_grad() or inference_mode) AOT
autograd keeps the inputs one for one, and TracingContext.fw_metadata says which of them the graph
mutates or returns views of. The others are frozen: lowering/pipeline.freeze folds BatchNorm into the
convolution or linear layer before it (fold_batch_norm.py) and evaluates every computation of constants
once (fold_constants.py), as inductor's freezing does.

Safety: inductor's freezing assumes the parameters never change after compiling. irc checks instead: a
frozen graph remembers each tensor a folded constant was computed from, with its version counter, and
before each call compares them with the tensors passed in (identity and `_version`: an optimizer step,
`load_state_dict` or any in-place update bumps it). A tensor changed in place sends every later call to the graph
compiled again without freezing; other tensors in those places (another instance of the module class, whose
calls Dynamo hands the same graph) get a frozen compile of their own (FrozenGraph). Only writes that bypass the version counter
(`param.data.copy_(...)`) go unseen; options={"freeze": False} turns freezing off. Graphs where nothing
folds run exactly as unfrozen ones, with no check.
"""

import logging
import time
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from xdsl.dialects import func
from xdsl.transforms.dead_code_elimination import dce

from irc.ir.rules import count_matches
from irc.lowering.fold_constants import ConstantArgs
from irc.lowering.pipeline import freeze, refreeze

log = logging.getLogger("irc.recompiles")  # irc.log topic


def static_inputs(example_inputs) -> dict[int, torch.Tensor]:
    """The real parameter and buffer tensors among a Dynamo graph's inputs, by position."""
    out = {}
    for i, x in enumerate(example_inputs):
        if (
            not isinstance(x, torch.Tensor)
            or isinstance(x, FakeTensor)
            or type(x) not in (torch.Tensor, torch.nn.Parameter)
        ):
            continue
        if (
            isinstance(x, torch.nn.Parameter) or getattr(x, "_dynamo_static_input_type", None)
        ) and x.layout == torch.strided:
            out[i] = x
    return out


@dataclass
class Freezer:
    """The frozen inputs of one inference graph and what folding made of them."""

    values: dict[int, torch.Tensor]
    base: list[torch.Tensor] | None = None  # the graph's own constants (get_attr), before folding appends any
    table: ConstantArgs = field(default_factory=ConstantArgs)

    def apply(self, module, constants: list[torch.Tensor], rep) -> list[torch.Tensor]:
        """Fold a freshly imported `module` in place; the constants to pass after the inputs (the graph's own, then
        the folded ones). Folding is deterministic: applied again to a fresh import, it gives the same list."""
        if self.base is None:
            self.base = list(constants)
        main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
        n = len(main.body.block.args)  # placeholders, then the graph's own constants
        self.table = ConstantArgs(
            values={**self.values, **{n - len(self.base) + k: t for k, t in enumerate(self.base)}}
        )
        t0 = time.perf_counter()
        with count_matches() as counts, unset_fake_temporarily():  # real values: the compile runs under fake mode
            freeze(module, self.table)
        rep.stage_seconds["freeze"] = time.perf_counter() - t0
        bn = counts["fold_conv_batch_norm"] + counts["fold_linear_batch_norm"]
        used = len(self.table.used & set(self.values))
        rep.freeze = (
            f"{used} of {len(self.values)} parameters and buffers folded: {bn} BatchNorm into the layer before, "
            f"{self.table.folded} ops evaluated into {len(self.table.appended)} constant tensors"
        )
        return [*self.base, *self.table.appended]

    def refold(self, module) -> list[torch.Tensor]:
        """Fold what tensor-opt's rewrites made of constants (a weight's rows reordered for an NHWC flatten:
        layout_rules.flatten_nhwc_into_product; sibling products' weights side by side: merge_products.py) with the
        same table; the constants this appends, in order."""
        start = len(self.table.appended)
        with unset_fake_temporarily():
            if refreeze(module, self.table):
                dce(module)  # the views the folds replaced
        return self.table.appended[start:]

    def guard(self, compiled, unfrozen, refrozen=None):
        """`compiled` as it is when nothing was folded from a frozen input, else checked against changes per call
        (`unfrozen()`: the graph compiled without freezing; `refrozen(args)`: frozen on these arguments' tensors)."""
        checks = [(i, t, t._version) for i, t in self.values.items() if i in self.table.used]
        return FrozenGraph(compiled, checks, unfrozen, refrozen) if checks else compiled


def plan(
    gm: torch.fx.GraphModule, opts, kind: str, static: dict[int, torch.Tensor] | None, n_inputs: int
) -> Freezer | None:
    """A Freezer for an inference graph whose frozen inputs are safe to fold, else None."""
    if opts.freeze is False or kind != "inference" or not static:
        return None
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != n_inputs:  # AOT autograd regrouped the inputs (synthetic bases, subclasses, tokens)
        return None
    ctx = torch._guards.TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None)
    if meta is None or len(meta.input_info) != n_inputs:
        return None
    aliased = {o.base_idx for o in meta.output_info if o.base_idx is not None}
    keep: dict[int, torch.Tensor] = {}
    for i, t in static.items():
        val = placeholders[i].meta.get("val")
        mutated = meta.input_info[i].mutation_type != torch._functorch._aot_autograd.schemas.MutationType.NOT_MUTATED
        if mutated or i in aliased or not isinstance(val, torch.Tensor):
            continue
        if tuple(val.shape) == tuple(t.shape) and val.dtype == t.dtype and tuple(val.stride()) == tuple(t.stride()):
            keep[i] = t
    return Freezer(keep) if keep else None


class FrozenGraph:
    """A compiled frozen graph that runs only while its frozen inputs are the tensors it folded, unchanged.

    A frozen tensor changed in place (an optimizer step, load_state_dict) sends every later call to the graph
    compiled without freezing. Other tensors in those places (another instance of the same module class, whose
    calls Dynamo hands the same graph: it guards parameters by their sizes, not their identity) get a frozen compile
    of their own, up to VARIANTS of them; only beyond that do the calls run unfrozen."""

    _boxed_call = True
    VARIANTS = 4

    def __init__(self, frozen, checks, unfrozen, refrozen=None):
        self.variants = [(checks, frozen)]  # (the tensors folded with their versions, the graph frozen on them)
        self.make_unfrozen, self.make_refrozen, self.unfrozen = unfrozen, refrozen, None

    def __call__(self, args):
        for checks, frozen in self.variants:
            if all(args[i] is t and t._version == v for i, t, v in checks):
                return frozen(args)
        if self.variants:
            self.variants = self._refreeze(args)
        if self.unfrozen is None and not self.variants:
            self.unfrozen = self.make_unfrozen()
        return self(args) if self.variants else self.unfrozen(args)

    def _refreeze(self, args) -> list:
        """The variants after a call matched none: none where a folded tensor changed in place (or there are
        VARIANTS already, or the new compile folds nothing), else one more, frozen on these arguments."""
        if any(args[i] is t and t._version != v for checks, _ in self.variants for i, t, v in checks):
            log.info("irc: a frozen parameter changed after compiling; compiling the graph again without freezing")
            return []
        if self.make_refrozen is None or len(self.variants) >= self.VARIANTS:
            log.info("irc: %d parameter sets frozen already; compiling the graph without freezing", len(self.variants))
            return []
        log.info("irc: other parameters in the frozen graph's places (another instance?); freezing them too")
        new = self.make_refrozen(args)
        return [*self.variants, *new.variants] if isinstance(new, FrozenGraph) else []


__all__ = ["Freezer", "FrozenGraph", "plan", "static_inputs"]
