"""Building a program one op at a time: every op is run on the real inputs as it is drawn, so each
value's shape and dtype are known and an op torch rejects is never kept.

Op families (tools/fuzz/ops_*.py) are functions `family(b) -> Op | None` over a Builder `b`:
they draw their parameters through `b.draw`, pick arguments among the values built so far
(`b.pick`), and may add fresh inputs (`b.fresh`: weights, broadcast partners, index tensors).
"""

import math
import warnings

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from .programs import DTYPES, Input, Op, Program, input_expr

MAX_NUMEL = 256  # elements per value: small programs are fast and shrink well
SIZES = (2, 1, 3, 5, 4, 0, 7, 8, 13)  # shrinks toward 2; sizes 0 and 1 and primes
FLOAT_DTYPES = ("f32",) * 6 + ("f64", "f16", "bf16")
ALL_DTYPES = ("f32",) * 8 + ("i64", "f64", "bool", "i32", "f16", "bf16", "u8", "i64")
LAYOUTS = ("contiguous",) * 5 + ("transposed", "strided", "offset", "expanded")
SCALARS = (2, 1, 0, -1, 0.5, -1.5, 3, 0.125, 1e3, -0.0)


class Builder:
    def __init__(self, draw, *, training: bool = False, dtypes=ALL_DTYPES, allow_dynamic: bool = True):
        self.draw, self.training, self.dtypes, self.allow_dynamic = draw, training, dtypes, allow_dynamic
        self.inputs: list[Input] = []
        self.ops: list[Op] = []
        self.values: list[torch.Tensor] = []  # the real value of each id (inputs, then op results)
        self.input_ids: list[int] = []  # value id of each input
        self.order: list[tuple[str, int]] = []  # ("input", i) / ("op", i) in creation order

    # -- values --------------------------------------------------------------------------------
    def val(self, i: int) -> torch.Tensor:
        return self.values[i]

    def pick(self, pred=lambda t: True) -> int | None:
        ids = [i for i, t in enumerate(self.values) if pred(t)]
        if not ids:
            return None
        return self.draw(st.sampled_from(ids[::-1]))  # shrinks toward the newest value

    def fresh(
        self,
        shape,
        dtype: str | None = None,
        *,
        low: int | None = None,
        high: int | None = None,
        layout: str | None = None,
        grad: bool | None = None,
    ) -> int:
        """A new input of this shape (and dtype, drawn when None); its value id."""
        shape = tuple(int(s) for s in shape)
        dtype = dtype or self.draw(st.sampled_from(FLOAT_DTYPES if self.training else self.dtypes))
        layout = layout or self.draw(st.sampled_from(LAYOUTS))
        expanded = ()
        if layout == "expanded":
            big = [d for d, n in enumerate(shape) if n > 1]
            expanded = tuple(d for d in big if self.draw(st.booleans())) or tuple(big[:1])
            layout = layout if expanded else "contiguous"
        if layout == "transposed" and len(shape) < 2 or layout in ("strided", "offset") and not shape:
            layout = "contiguous"
        dynamic = ()
        if self.allow_dynamic and self.draw(st.integers(0, 3)) == 3:
            dynamic = tuple(d for d, n in enumerate(shape) if n >= 2 and self.draw(st.booleans()))
        is_float = DTYPES[dtype].is_floating_point
        if grad is None:
            grad = self.training and is_float
        x = Input(
            shape,
            dtype,
            layout,
            dynamic,
            grad and is_float,
            expanded,
            -24 if low is None else low,
            25 if high is None else high,
            seed=len(self.inputs),
        )
        self.inputs.append(x)
        self.values.append(self.materialize(x))
        self.input_ids.append(len(self.values) - 1)
        self.order.append(("input", len(self.inputs) - 1))
        return len(self.values) - 1

    @staticmethod
    def materialize(x: Input, seed: int = 0) -> torch.Tensor:
        def g(i):
            return torch.Generator().manual_seed(1000 * seed + i)

        return eval(input_expr(x), {"torch": torch, "g": g, "grow": 0})

    # -- drawing helpers ---------------------------------------------------------------------------
    def shape(self, rank: int | None = None, cap: int = 64) -> tuple[int, ...]:
        rank = self.draw(st.sampled_from((2, 1, 0, 3, 4))) if rank is None else rank
        dims = []
        for _ in range(rank):
            n = self.draw(st.sampled_from(SIZES))
            dims.append(n if math.prod(dims) * max(n, 1) <= cap else 1)
        return tuple(dims)

    def dim(self, t: torch.Tensor) -> int | None:
        """A dim of t (sometimes negative), None for a 0-d tensor."""
        if t.dim() == 0:
            return None
        d = self.draw(st.integers(0, t.dim() - 1))
        return d - t.dim() if self.draw(st.integers(0, 3)) == 3 else d

    def dims(self, t: torch.Tensor) -> tuple[int, ...]:
        return tuple(d for d in range(t.dim()) if self.draw(st.booleans()))

    def scalar(self, t: torch.Tensor | None = None):
        v = self.draw(st.sampled_from(SCALARS))
        if t is not None and not t.is_floating_point():
            v = int(v) if t.dtype != torch.bool else bool(v)
        return v

    def broadcast_partner(self, t: torch.Tensor, dtype: str | None = None) -> int:
        """An existing value that broadcasts with t, or a fresh input of a shape that does."""
        if self.draw(st.booleans()):
            j = self.pick(lambda u: _broadcasts(t, u))
            if j is not None:
                return j
        shape = list(t.shape)
        drop = self.draw(st.integers(0, len(shape)))
        shape = [1 if n > 1 and self.draw(st.integers(0, 3)) == 0 else n for n in shape[drop:]]
        if self.draw(st.integers(0, 5)) == 0:
            shape = [self.draw(st.sampled_from((2, 3)))] + shape
        return self.fresh(shape, dtype)

    # -- ops ---------------------------------------------------------------------------------------
    def evaluate(self, op: Op) -> torch.Tensor | None:
        """The op's value on the real inputs, or None where torch rejects it or it is too large."""
        names = [f"x{i}" for i in range(len(self.values))]
        env = dict(zip(names, self.values))
        try:
            with warnings.catch_warnings(), torch.set_grad_enabled(self.training):
                warnings.simplefilter("ignore")
                out = eval(op.render(names), {"torch": torch, "F": F, "math": math}, env)
        except Exception:
            return None
        if (
            not isinstance(out, torch.Tensor)
            or out.numel() > MAX_NUMEL
            or out.is_complex()
            or out.dtype not in DTYPES.values()
        ):
            return None
        if any(out is v for v in self.values):
            return None  # an op that returns its argument unchanged is no op
        return out

    def add(self, op: Op | None) -> bool:
        if op is None:
            return False
        out = self.evaluate(op)
        if out is None:
            return False
        self.ops.append(op)
        self.values.append(out)
        self.order.append(("op", len(self.ops) - 1))
        return True

    def program(self, outputs: tuple[int, ...]) -> Program:
        """Number the values as Program does: the inputs first, then the ops, in creation order."""
        ids: dict[int, int] = {}
        n_in = len(self.inputs)
        op_i = in_i = 0
        for kind, _ in self.order:
            old = len(ids)
            if kind == "input":
                ids[old] = in_i
                in_i += 1
            else:
                ids[old] = n_in + op_i
                op_i += 1
        ops = tuple(Op(o.kind, tuple(ids[a] for a in o.args), o.expr) for o in self.ops)
        return Program(tuple(self.inputs), ops, tuple(ids[o] for o in outputs), self.training).live()


def _broadcasts(t: torch.Tensor, u: torch.Tensor) -> bool:
    try:
        return math.prod(torch.broadcast_shapes(t.shape, u.shape)) <= MAX_NUMEL
    except RuntimeError:
        return False


def tup(xs) -> str:
    xs = list(xs)
    return "(" + ", ".join(map(repr, xs)) + ("," if len(xs) == 1 else "") + ")"
