"""What compiled code assumes about each argument of a graph's @main, for every target: `ArgSpec`."""

from __future__ import annotations

from dataclasses import dataclass

import torch


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

    @staticmethod
    def of(value, name: str = "arg") -> ArgSpec:
        """From a real or fake tensor, a SymInt or an int (symbolic sizes become their expression's text)."""
        if isinstance(value, torch.Tensor):
            return ArgSpec(name, "tensor", value.dtype, tuple(map(_key, value.shape)), tuple(map(_key, value.stride())))
        if isinstance(value, int | torch.SymInt):
            return ArgSpec(name, "index", value=_key(value))
        return ArgSpec(name, "other")


def _key(x):
    if isinstance(x, torch.SymInt):
        expr = x.node.expr
        return int(expr) if expr.is_Integer else str(expr)
    return int(x)


def graph_args(placeholders, constants) -> list[ArgSpec]:
    """The ArgSpecs of a graph's @main: its FX placeholders (their example values), then the constants the import added."""
    names = [n.name for n in placeholders] + [f"constant{i}" for i in range(len(constants))]
    values = [n.meta.get("val") for n in placeholders] + list(constants)
    return [ArgSpec.of(v, name) for v, name in zip(values, names)]
