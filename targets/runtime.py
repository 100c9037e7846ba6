"""The host side of a compiled graph: bind arguments, run, and hand back outputs with eager's strides."""

import functools
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class OutputSpec:
    """Where output i comes from and the layout eager gives it."""

    # ("result", i), ("const", value), ("view", k): the k-th view of an input (views()), or ("output view", k):
    # the k-th view of another output (output_views())
    source: tuple[str, Any]
    strides: tuple[int, ...] | None  # exact strides when static
    order: tuple[int, ...] | None  # dims from innermost to outermost, for symbolic shapes
    broadcast: tuple[int, ...] = ()  # for symbolic shapes: dims eager gives stride 0 (an expand)


def output_spec(source, meta) -> OutputSpec:
    if not isinstance(meta, torch.Tensor):
        return OutputSpec(source, None, None)
    strides = meta.stride()
    if all(isinstance(s, int) for s in strides) and all(isinstance(d, int) for d in meta.shape):
        return OutputSpec(source, tuple(strides), None)
    hints = [s.node.hint if isinstance(s, torch.SymInt) else s for s in strides]
    order = tuple(sorted(range(len(hints)), key=lambda i: (hints[i], i)))
    broadcast = tuple(i for i, s in enumerate(strides) if isinstance(s, int) and s == 0)
    return OutputSpec(source, None, order, broadcast)


def is_dense(sizes, strides) -> bool:
    """Whether `strides` lay the elements of `sizes` without gaps or overlaps (in any order of the dims)."""
    step = 1
    for n, stride in sorted((p for p in zip(sizes, strides) if p[0] != 1), key=lambda p: p[1]):
        if stride != step:
            return False
        step *= n
    return True


def _dense_strides(shape, order, broadcast=()) -> list[int]:
    """Strides of a dense tensor whose dims lie in `order`, innermost first; `broadcast` dims get stride 0."""
    strides = [0] * len(shape)
    step = 1
    for d in order:
        if d not in broadcast:
            strides[d] = step
            step *= max(shape[d], 1)
    return strides


@functools.lru_cache(maxsize=256)
def _dense(shape: torch.Size, order: tuple[int, ...], broadcast: tuple[int, ...]) -> tuple[int, ...]:
    """_dense_strides remembered: a dynamic graph's calls mostly repeat a few shapes."""
    return tuple(_dense_strides(shape, order, broadcast))


def _strided(r: torch.Tensor, spec: OutputSpec) -> torch.Tensor:
    """A fresh result in the output's strides (a copy only where they differ)."""
    want = spec.strides if spec.strides is not None else _dense(r.shape, spec.order, spec.broadcast)
    return r if r.stride() == want else _restride(r, spec)


def _restride(t: torch.Tensor, spec: OutputSpec) -> torch.Tensor:
    if spec.strides is not None:
        want = list(spec.strides)
    elif spec.order is not None:
        want = _dense_strides(t.shape, spec.order, spec.broadcast)
    else:
        return t
    if t.stride() == tuple(want) or t.numel() <= 1:
        return t
    # Broadcast dims (stride 0, as eager's expand gives) hold one copy of their slice: copy that, then view it.
    small = t
    for d, (n, s) in enumerate(zip(t.shape, want)):
        if s == 0 and n > 1:
            small = small.narrow(d, 0, 1)
    try:
        out = torch.empty_strided(small.shape, [s or 1 for s in want], dtype=t.dtype, device=t.device)
        out.copy_(small)
    except RuntimeError:  # a layout that overlaps in other ways: the values are what matter
        return t
    return out if small is t else out.as_strided(t.shape, want)


def write_input(dst: torch.Tensor, src: torch.Tensor) -> None:
    """dst.copy_(src), unless the program computed src in dst's own memory (a target writing the input in place).
    The version counter stays: AOT autograd's runtime bumps it for the graph's writes that autograd sees."""
    if src is dst or (src.data_ptr() == dst.data_ptr() and src.stride() == dst.stride() and src.shape == dst.shape):
        return
    with torch.no_grad(), nullcontext() if dst.is_inference() else torch.autograd._unsafe_preserve_version_counter(dst):
        if dst.shape != src.shape:  # the graph resized the input (an observer's empty statistics, at its first call)
            dst.resize_(src.shape)
        dst.copy_(src)


_TOKEN = torch.empty(0)  # what an effect token holds (torch._higher_order_ops.effects: an empty float tensor)


class CompiledGraph:
    """A boxed callable (AOT autograd's convention: one list argument) over an executor of the program."""

    _boxed_call = True

    def __init__(
        self,
        run: Callable[[Sequence[Any]], Sequence[Any]],
        outputs: list[OutputSpec],
        constants: list[torch.Tensor],
        fresh: Sequence[bool] = (),
        views: Callable[[list], Sequence[Any]] | None = None,
        writes: Sequence[tuple[int, int]] = (),
        tokens: Sequence[int] = (),
        output_views: Callable[[list, list], Sequence[Any]] | None = None,
    ):
        self.run = run
        self.output_views = output_views  # outputs that are views of other outputs, made from those (aliases.py)
        self.derived = [(i, spec.source[1]) for i, spec in enumerate(outputs) if spec.source[0] == "output view"]
        self.tokens = list(
            tokens
        )  # inputs that are effect tokens: AOT autograd passes None, the program an empty tensor
        self.writes = list(writes)  # (input, result): after a call the result is written into the input
        self.views = views  # outputs that are views of inputs, made from the inputs themselves (dynamo/aliases.py)
        self.outputs = outputs
        self.constants = constants
        # fresh[i]: result i is always a new buffer of its own (no input or other result shares it), as the
        # CPU target's allocated outputs are; such results skip the aliasing check.
        self.fresh = [
            spec.source[0] == "result" and spec.source[1] < len(fresh) and fresh[spec.source[1]] for spec in outputs
        ]
        # A call whose outputs are all fresh results, with nothing to write, view or add: the loop below with its
        # questions answered once (on a small graph the loop is a visible share of the call)
        self.plain = None
        extras = constants or self.tokens or self.writes or views or self.derived
        if not extras and all(f and spec.source[0] == "result" for spec, f in zip(outputs, self.fresh)):
            self.plain = [(spec.source[1], spec) for spec in outputs]
        # An instance attribute too: Dynamo's disable() wraps the backward with functools.wraps,
        # which copies the instance __dict__ but not class attributes.
        self._boxed_call = True

    def __call__(self, args: list) -> list:
        inputs = list(args)
        args.clear()
        if self.plain is not None:
            results = self.run(inputs)
            return [_strided(results[v], spec) for v, spec in self.plain]
        for i in self.tokens:
            if inputs[i] is None:
                inputs[i] = _TOKEN
        results = self.run([*inputs, *self.constants] if self.constants else inputs)
        for i, k in self.writes:
            write_input(inputs[i], results[k])
        views = self.views(inputs) if self.views is not None else ()
        input_storages = None
        out = []
        for spec, fresh in zip(self.outputs, self.fresh):
            kind, v = spec.source
            if kind == "const":
                out.append(v)
                continue
            if kind == "view":
                out.append(views[v])
                continue
            if kind == "output view":
                out.append(None)  # made below, once the output it views is
                continue
            r = results[v]
            if isinstance(r, torch.Tensor):
                if fresh:
                    out.append(_strided(r, spec))
                    continue
                if input_storages is None:
                    input_storages = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}
                    input_storages.update(o.untyped_storage().data_ptr() for o in out if isinstance(o, torch.Tensor))
                ptr = r.untyped_storage().data_ptr()
                # Value semantics: an output must not share memory with an input or an earlier output.
                if ptr in input_storages:
                    r = r.clone()
                    ptr = r.untyped_storage().data_ptr()
                r = _restride(r, spec)
                input_storages.add(r.untyped_storage().data_ptr())
            out.append(r)
        if self.derived:
            made = self.output_views(inputs, out)
            for i, k in self.derived:
                out[i] = made[k]
        return out
