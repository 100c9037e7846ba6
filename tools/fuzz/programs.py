"""A fuzz program is data: inputs and a list of op records over value ids, rendered to Python source.

Values are numbered: the inputs first (`a0`, `a1`, ...), then one value per op (`v3`, `v4`, ...).
An op record is an expression template over its arguments (`torch.add({0}, {1})`), so a program
renders to a runnable snippet (`source`) whose `fn` is what torch.compile sees and whose
`make_inputs` builds the exact tensors the fuzzer used: integer-valued floats divided by 8 (sums
and products of a few are exact, so eager and irc differ only where rounding really differs),
non-contiguous, offset and expanded (stride-0) layouts, and dims marked dynamic.
"""

import math
from dataclasses import dataclass, replace

import torch

DTYPES = {
    "f32": torch.float32,
    "f64": torch.float64,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "i64": torch.int64,
    "i32": torch.int32,
    "u8": torch.uint8,
    "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
LAYOUTS = ("contiguous", "transposed", "strided", "offset", "expanded")


@dataclass(frozen=True)
class Input:
    """One argument of `fn`: its shape, dtype, memory layout, dynamic dims, and whether it takes a gradient."""

    shape: tuple[int, ...]
    dtype: str = "f32"
    layout: str = "contiguous"
    dynamic: tuple[int, ...] = ()  # dims given to torch._dynamo.maybe_mark_dynamic
    grad: bool = False
    expanded: tuple[int, ...] = ()  # layout "expanded": dims of stride 0
    low: int = -24  # integer inputs: values in [low, high); floats: that / 8
    high: int = 25
    seed: int = 0  # this input's own generator (stable when other inputs are dropped)

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]


@dataclass(frozen=True)
class Op:
    """One op: `kind` (for reports and statistics), its arguments (value ids) and the expression over them."""

    kind: str
    args: tuple[int, ...]
    expr: str  # `{0}`, `{1}`, ... are the arguments' names

    def render(self, names: list[str]) -> str:
        return self.expr.format(*(names[a] for a in self.args))


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    ops: tuple[Op, ...]
    outputs: tuple[int, ...]
    training: bool = False  # the property also compares gradients of the inputs with grad=True

    @property
    def n_values(self) -> int:
        return len(self.inputs) + len(self.ops)

    def live(self) -> "Program":
        """The program without ops that no output depends on, and without unused inputs."""
        n_in = len(self.inputs)
        need = set(self.outputs)
        for i in range(len(self.ops) - 1, -1, -1):
            if n_in + i in need:
                need.update(self.ops[i].args)
        keep_in = [i for i in range(n_in) if i in need]
        keep_ops = [i for i in range(len(self.ops)) if n_in + i in need]
        new_id = {old: new for new, old in enumerate(keep_in + [n_in + i for i in keep_ops])}
        ops = tuple(replace(self.ops[i], args=tuple(new_id[a] for a in self.ops[i].args)) for i in keep_ops)
        return replace(
            self, inputs=tuple(self.inputs[i] for i in keep_in), ops=ops, outputs=tuple(new_id[o] for o in self.outputs)
        )

    def names(self) -> list[str]:
        return [f"a{i}" for i in range(len(self.inputs))] + [f"v{len(self.inputs) + i}" for i in range(len(self.ops))]

    def op_kinds(self) -> list[str]:
        return [op.kind for op in self.ops]


# -- rendering -----------------------------------------------------------------------------------


def _shape(s) -> str:
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def input_expr(x: Input) -> str:
    """The expression building one input from its generator `g(seed)`; dynamic dims are `n + grow`."""
    dims = [f"{n} + grow" if d in x.dynamic else str(n) for d, n in enumerate(x.shape)]
    base = list(dims)
    view = ""
    if x.layout == "transposed" and len(base) >= 2:
        base = base[::-1]
        view = f".permute{_shape(tuple(range(len(base)))[::-1])}"
    elif x.layout == "strided" and base:
        base[-1] = f"({base[-1]}) * 2"
        view = "[..., ::2]"
    elif x.layout == "offset" and base:
        base[0] = f"{base[0]} + 1"
        view = "[1:]"
    elif x.layout == "expanded" and x.expanded:
        for d in x.expanded:
            base[d] = "1"
        view = f".expand{_shape(dims)}"
    dt = x.torch_dtype
    if dt == torch.bool:
        e = f"torch.randint(0, 2, {_shape(base)}, generator=g({x.seed})).bool()"
    elif dt.is_floating_point:
        e = f"torch.randint({x.low}, {x.high}, {_shape(base)}, generator=g({x.seed})).div(8).to(torch.{str(dt).split('.')[-1]})"
    else:
        lo = max(x.low, 0) if dt == torch.uint8 else x.low
        e = f"torch.randint({lo}, {max(x.high, lo + 1)}, {_shape(base)}, generator=g({x.seed})).to(torch.{str(dt).split('.')[-1]})"
    if x.grad:
        e += ".requires_grad_()"
    return e + view


def source(p: Program, *, options: dict | None = None, dynamic: bool = True) -> str:
    """A runnable Python file: `fn`, `make_inputs`, and (run as a script) irc against eager."""
    names = p.names()
    n_in = len(p.inputs)
    lines = ["import torch", "import torch.nn.functional as F", "", "", f"def fn({', '.join(names[:n_in])}):"]
    for i, op in enumerate(p.ops):
        lines.append(f"    {names[n_in + i]} = {op.render(names)}")
    outs = ", ".join(names[o] for o in p.outputs)
    lines.append(f"    return {outs}{',' if len(p.outputs) == 1 else ''}")
    lines += [
        "",
        "",
        "def make_inputs(seed=0, grow=0):",
        "    def g(i):",
        "        return torch.Generator().manual_seed(1000 * seed + i)",
        "",
    ]
    for i, x in enumerate(p.inputs):
        lines.append(f"    a{i} = {input_expr(x)}")
        if dynamic:
            lines += [f"    torch._dynamo.maybe_mark_dynamic(a{i}, {d})" for d in x.dynamic]
    lines.append(f"    return [{', '.join(names[:n_in])}]")
    opts = {"strict": True, **(options or {})}
    run = "compare_training" if p.training else "compare"
    lines += [
        "",
        "",
        "if __name__ == '__main__':",
        "    import irc",
        f"    compiled = torch.compile(fn, backend=irc.backend, options={opts!r})",
        f"    from irc.tools.fuzz.oracle import {run}",
        f"    print({run}(fn, compiled, make_inputs)"
        + (f" or {run}(fn, compiled, lambda: make_inputs(grow=1))" if any(x.dynamic for x in p.inputs) else "")
        + " or 'irc matches eager')",
        "",
    ]
    return "\n".join(lines)


@dataclass
class Loaded:
    fn: object
    make_inputs: object
    text: str


def load(p: Program, *, dynamic: bool = True) -> Loaded:
    text = source(p, dynamic=dynamic)
    namespace: dict = {"__name__": "irc_fuzz_program"}
    exec(compile(text, "<irc-fuzz program>", "exec"), namespace)
    return Loaded(namespace["fn"], namespace["make_inputs"], text)


def numel(shape) -> int:
    return math.prod(shape)


def describe(p: Program) -> str:
    ins = ", ".join(
        f"{x.dtype}{list(x.shape)}"
        + (f" {x.layout}" if x.layout != "contiguous" else "")
        + (f" dyn{list(x.dynamic)}" if x.dynamic else "")
        for x in p.inputs
    )
    return f"{len(p.ops)} ops ({', '.join(p.op_kinds())}) on {ins}" + (" [training]" if p.training else "")
