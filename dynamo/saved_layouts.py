"""Activations a training forward saves for its backward, handed over in the layout the program computed them.

Eager's strides matter only for what the user sees. A tensor the forward saves goes to the backward, which irc
also compiles, so the runtime need not copy it into eager's strides (q, k and v split out of a fused in-projection,
copied every step). AOT autograd has a protocol for
this, the one inductor uses: the forward compiler reports the strides of its outputs
(`TracingContext.report_output_strides`), and AOT autograd compiles the backward with its saved inputs in those
strides. The forward keeps a saved output's own strides where its program decides them every call and they are
dense (static sizes: AOT autograd takes integer strides only); elsewhere eager's, as before.
"""

from collections.abc import Callable
from dataclasses import replace

import torch
from torch._guards import TracingContext

from irc.targets.runtime import OutputSpec


def keep_saved_layouts(specs: list[OutputSpec], result_strides, bases=frozenset()) -> list[OutputSpec]:
    """A forward's output specs, its saved outputs taking the program's strides (`result_strides`: per program
    result, its strides or None) where AOT autograd asks for them, but for `bases` (outputs other outputs are views
    of, replayed in eager's layout: aliases.output_views); each output's strides reported to AOT autograd."""
    tc = TracingContext.try_get()
    if tc is None or tc.output_strides is None or tc.fw_metadata is None or tc.fw_metadata.tokens:
        return specs  # effect tokens: the graph returns them first, and AOT autograd's slices do not count them
    try:
        saved = range(len(specs))[tc.fw_metadata.tensors_saved_for_backwards_slice]
    except AssertionError:  # no partition (an inference graph's metadata)
        return specs
    out, reported = [], []
    for i, spec in enumerate(specs):
        own = None
        if i in saved and i not in bases and spec.source[0] == "result" and spec.strides is not None and result_strides:
            own = result_strides[spec.source[1]]
        if own is not None and own != spec.strides:
            spec = replace(spec, strides=own)
            reported.append(own)
        else:
            reported.append(None)  # AOT autograd keeps eager's strides
        out.append(spec)
    tc.output_strides.extend(reported)
    return out


# ops whose result depends on the memory layout of their input, not only on its values
_LAYOUT_READERS = {
    torch.ops.aten.as_strided.default,
    torch.ops.aten.as_strided_copy.default,
    torch.ops.aten.as_strided_scatter.default,
}


def take_saved_layouts(gm: torch.fx.GraphModule, example_inputs) -> tuple[dict, dict]:
    """A backward's placeholders take the strides of the inputs AOT autograd compiles it for (the forward's own,
    where it reported them). Returns ({input: eager's strides} for those that changed, the same for those that
    cannot: an as_strided reads them, traced on eager's layout; the runtime copies these into it)."""
    relaid, restore = {}, {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, (n, v) in enumerate(zip(placeholders, example_inputs)):
        meta = n.meta.get("val")
        if isinstance(v, torch.Tensor) and isinstance(meta, torch.Tensor) and v.stride() != meta.stride():
            if any(u.target in _LAYOUT_READERS for u in n.users):
                restore[i] = tuple(meta.stride())
            else:
                relaid[i] = tuple(meta.stride())
                n.meta["val"] = v
    return relaid, restore


def in_eager_layouts(fn: Callable, changed: dict[int, tuple[int, ...]]) -> Callable:
    """fn (a backward run eagerly, or the replay of its outputs that view inputs) over inputs in eager's strides:
    its view ops were traced on those. `changed`: {input: eager's strides}."""
    if not changed:
        return fn

    def run(args: list):
        args = list(args)  # the caller's list stays as it is (the runtime checks aliasing against it)
        for i, strides in changed.items():
            t = args[i]
            if t.stride() != strides:
                args[i] = torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device).copy_(t)
        return fn(args)

    run._boxed_call = True
    return run
