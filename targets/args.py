"""What compiled code assumes about each argument of a graph's @main, for every target: `ArgSpec`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute


@dataclass(frozen=True)
class ArgSpec:
    """One @main argument as compiled: a tensor (dtype, sizes, strides: ints or symbolic keys), an index
    value (an int or a key), or anything else (passed through)."""

    name: str
    kind: str  # "tensor" | "index" | "other"
    dtype: torch.dtype | None = None
    sizes: tuple = ()
    strides: tuple = ()
    value: int | str | None = None
    # the caller passes this same tensor, changed rarely if ever, to every call (a constant of the graph, a
    # frozen parameter of an inference graph): a library path may keep it prepacked while its version holds.
    # A training graph's weights change every step and its saved activations are new tensors every call.
    stable: bool = False
    # a tensor the graph writes (AOT autograd's kept input mutation): @main's result of this index holds its new
    # value, which the runtime writes into it after each call; a target may compute that result in the
    # argument's own memory instead, where nothing reads the old value after (the CPU target does).
    written_from: int | None = None
    # the real tensor every call passes here (a frozen parameter, a constant), where the caller has it: measuring
    # builds (targets/timing.py) reads it instead of a random copy of a model's weights. Not part of the spec.
    example: torch.Tensor | None = field(default=None, compare=False, repr=False)

    def to_attr(self) -> DictionaryAttr:
        """The spec as an MLIR dictionary, so a dumped module carries what its target's rules read."""
        fields = {"name": StringAttr(self.name), "kind": StringAttr(self.kind)}
        if self.dtype is not None:
            fields["dtype"] = StringAttr(str(self.dtype).removeprefix("torch."))
        if self.kind == "tensor":
            fields["sizes"], fields["strides"] = (
                ArrayAttr(map(_size_attr, self.sizes)),
                ArrayAttr(map(_size_attr, self.strides)),
            )
        if self.value is not None:
            fields["value"] = _size_attr(self.value)
        if self.stable:
            fields["stable"] = UnitAttr()
        if self.written_from is not None:
            fields["written_from"] = IntegerAttr(self.written_from, 64)
        return DictionaryAttr(fields)

    @staticmethod
    def from_attr(attr: DictionaryAttr) -> ArgSpec:
        d = attr.data
        dtype = getattr(torch, d["dtype"].data) if "dtype" in d else None
        sizes = tuple(map(_size_of, d["sizes"].data)) if "sizes" in d else ()
        strides = tuple(map(_size_of, d["strides"].data)) if "strides" in d else ()
        written = d["written_from"].value.data if "written_from" in d else None
        value = _size_of(d["value"]) if "value" in d else None
        return ArgSpec(d["name"].data, d["kind"].data, dtype, sizes, strides, value, "stable" in d, written)

    @staticmethod
    def of(value, name: str = "arg") -> ArgSpec:
        """From a real or fake tensor, a SymInt or an int (symbolic sizes become their expression's text)."""
        if isinstance(value, torch.Tensor):
            return ArgSpec(name, "tensor", value.dtype, tuple(map(_key, value.shape)), tuple(map(_key, value.stride())))
        if isinstance(value, int | torch.SymInt):
            return ArgSpec(name, "index", value=_key(value))
        return ArgSpec(name, "other")


def _size_attr(x: int | str) -> Attribute:
    return StringAttr(x) if isinstance(x, str) else IntegerAttr(x, 64)


def _size_of(a: Attribute) -> int | str:
    return a.data if isinstance(a, StringAttr) else a.value.data


def _key(x):
    if isinstance(x, torch.SymInt):
        expr = x.node.expr
        return int(expr) if expr.is_Integer else str(expr)
    return int(x)


def graph_args(placeholders, constants, stable=None, writes=()) -> list[ArgSpec]:
    """The ArgSpecs of a graph's @main: its FX placeholders (their example values), then the constants the import
    added; the constants and the placeholders in `stable` (position -> the real tensor) are marked stable, with
    that tensor as their example; `writes`: (input, result) pairs, the inputs the graph writes and the results
    holding their new values."""
    stable = stable or {}
    names = [n.name for n in placeholders] + [f"constant{i}" for i in range(len(constants))]
    values = [n.meta.get("val") for n in placeholders] + list(constants)
    real = {**stable, **{len(placeholders) + k: c for k, c in enumerate(constants)}}
    written = dict(writes)
    return [
        replace(
            ArgSpec.of(v, name),
            stable=i in real,
            written_from=written.get(i),
            example=real.get(i) if type(real.get(i)) in (torch.Tensor, torch.nn.Parameter) else None,
        )
        for i, (v, name) in enumerate(zip(values, names))
    ]
