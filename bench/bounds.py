"""What each step of an irc call must do and what the machine allows for it (bench/roofline.py's bounds):
flops of a library product (mm, bmm, convolution, attention) and the best library time for that exact problem
alone; the bytes a generated kernel or a copy must move, and the copy bandwidth they are bounded by.

Shapes and buffers come from the cpu target's planned graph (targets/cpu/runtime/graph.py: Step, Buf), so the
figures are those of the mem stage irc runs. A dynamic size is read from `vals`, the cells of one call.
"""

from __future__ import annotations

import math
import statistics
import time

import torch
import torch.nn.functional as F

from irc.dialects import tensor as tn

PRODUCTS = (
    tn.MmOp,
    tn.AddmmOp,
    tn.BmmOp,
    tn.ConvolutionOp,
    tn.ScaledDotProductAttentionOp,
    tn.QConvOp,
    tn.QLinearOp,
    tn.QLinearDynamicOp,
)
INT8_FORMS = ("tn.mm", "tn.addmm", "tn.convolution")  # the products oneDNN has int8 kernels for
OUTPUTS = (("float32", torch.float32, 1.0), ("uint8", None, 0.05))  # an int8 product's result: dtype, its scale


def _size(lin, vals) -> int:
    return lin.const if lin.static else lin.eval(vals)


def shape(buf, vals=()) -> tuple[int, ...]:
    return tuple(_size(s, vals) for s in buf.sizes)


def footprint(buf, vals=()) -> int:
    """Bytes of the distinct elements a buffer view addresses (a broadcast dim, stride 0, counts once)."""
    sizes, strides = shape(buf, vals), [_size(s, vals) for s in buf.strides]
    if 0 in sizes:
        return 0
    return math.prod(n for n, st in zip(sizes, strides) if st != 0) * buf.dtype.itemsize


def _points(nest, syms) -> int | None:
    try:
        return math.prod(nest.space.data.eval([], list(syms)))
    except Exception:  # noqa: BLE001 - a space the map cannot evaluate: no cap
        return None


def kernel_bytes(g, st, vals=()) -> int:
    """The bytes a launch must move: each distinct input read once (at most one element per point of its
    iteration space: a gather reads rows of a table, not the table), each output written once."""
    points = _points(g.kernels[st.op.callee.root_reference.data], [_size(s, vals) for s in st.syms])
    total, seen = 0, set()
    for b in st.ins:
        key = (b.root, repr(b.sizes), repr(b.strides), repr(b.offset))
        if key not in seen:
            seen.add(key)
            n = footprint(b, vals)
            total += min(n, points * b.dtype.itemsize) if points is not None else n
    return total + sum(footprint(b, vals) for b in st.outs)


def kernel_summary(g, st, vals=()) -> str:
    """What a launch computes, for the report: its output shapes and the math and reductions in its body
    ("2048x256 [reduce, rsqrt]")."""
    nest = g.kernels[st.op.callee.root_reference.data]
    ops = sorted(
        {
            op.name.removeprefix("math.").removeprefix("loop.")
            for op in nest.walk()
            if op.name.startswith("math.") or op.name == "loop.reduce"
        }
    )
    outs = ", ".join("x".join(map(str, shape(b, vals))) for b in st.outs)
    return outs + (f" [{', '.join(ops)}]" if ops else "")


def _inner(st):
    ops = list(st.op.body.block.ops)
    return ops[0] if len(ops) == 2 and isinstance(ops[0], PRODUCTS) else None


def _results(g, st) -> list:
    return list(st.outs) + [g.roots[root].buf for root, _ in st.results]


def extern_bytes(g, st, vals=()) -> int:
    return sum(footprint(b, vals) for b in st.ins if hasattr(b, "sizes")) + sum(
        footprint(b, vals) for b in _results(g, st)
    )


def _static(v) -> list[int] | None:
    dims = list(v.type.get_shape())
    return None if any(d < 0 for d in dims) else dims


def _int8_problem(op) -> dict | None:
    """An int8 product (fuse-quant's tn.qconv / tn.qlinear / tn.qlinear_dynamic) as the float problem it computes,
    in dtype int8: a linear layer of (M, K) activations and (N, K) weights is the mm / addmm of (M, K) and (K, N)."""
    x, w = _static(op.input), _static(op.weight)
    bias = [[w[0]]] if op.bias is not None else []
    if x is None or w is None:
        return None
    if isinstance(op, tn.QConvOp):
        p = {"op": "tn.convolution", "shapes": [x, w, *bias], "out": _static(op.result)}
        p.update(_conv_params(op))
    else:
        p = {"op": "tn.addmm" if bias else "tn.mm", "shapes": [x, [w[1], w[0]], *bias], "out": [x[0], w[0]]}
    return {**p, "dtype": "int8"} if p["out"] is not None else None


def _conv_params(op) -> dict:
    return {
        "stride": list(op.stride.get_values()),
        "padding": list(op.padding.get_values()),
        "dilation": list(op.dilation.get_values()),
        "groups": op.groups.value.data,
        "transposed": op.transposed is not None,
        "channels_last": op.channels_last is not None,
    }


def problem(g, st, vals=()) -> dict | None:
    """A library product's problem (op, operand shapes, dtype, conv parameters), or None for other externs. An int8
    product reads as the float problem it computes, in dtype int8."""
    op = _inner(st)
    if op is None:
        return None
    if isinstance(op, (tn.QConvOp, tn.QLinearOp, tn.QLinearDynamicOp)):
        return _int8_problem(op)
    p = {
        "op": op.name,
        "shapes": [shape(b, vals) for b in st.ins if hasattr(b, "sizes")],
        "out": shape(_results(g, st)[0], vals),
        "dtype": str(st.ins[0].dtype).removeprefix("torch."),
    }
    if isinstance(op, tn.ConvolutionOp):
        p.update(_conv_params(op))
    if isinstance(op, tn.ScaledDotProductAttentionOp):
        p["scale"] = op.scale.value.data
        p["bool_mask"] = len(p["shapes"]) > 3 and st.ins[3].dtype == torch.bool
    return p


def describe(p: dict) -> str:
    dims = ["x".join(map(str, s)) for s in p["shapes"]]
    if p["op"] == "tn.convolution":  # everything the best time depends on: it keys the measurements
        extra = "".join(
            (
                f" d{p['dilation']}" if set(p["dilation"]) != {1} else "",
                f" g{p['groups']}" if p["groups"] != 1 else "",
                " +bias" if len(dims) > 2 else "",
                " NHWC" if p["channels_last"] else "",
            )
        )
        return f"{p['op']} {dims[0]} * {dims[1]} s{p['stride']} p{p['padding']}{extra} {p['dtype']}"
    return f"{p['op']} {' @ '.join(dims[:2]) if p['op'] in ('tn.mm', 'tn.addmm', 'tn.bmm') else ', '.join(dims)} {p['dtype']}"


def flops(p: dict) -> float:
    """Multiply-adds x 2 of a product: mm (and addmm) M*K*N, bmm B*M*K*N, convolution out * (C/groups * kernel)
    (transposed: in * (O/groups * kernel)), attention B*H*L*S*(E + Ev) (scores, then the weighted values)."""
    s = p["shapes"]
    if p["op"] in ("tn.mm", "tn.addmm"):
        return 2.0 * s[0][0] * s[0][1] * s[1][1]
    if p["op"] == "tn.bmm":
        return 2.0 * s[0][0] * s[0][1] * s[0][2] * s[1][2]
    if p["op"] == "tn.convolution":
        return 2.0 * math.prod(s[0] if p["transposed"] else p["out"]) * math.prod(s[1][1:])
    q, k, v = s[0], s[1], s[2]
    return 2.0 * math.prod(q[:-1]) * k[-2] * (q[-1] + v[-1])


# -- the machine's limits -------------------------------------------------------------------------
def copy_bandwidth(reps: int = 9, tries: int = 3, nbytes: int = 64 << 20) -> float:
    """GB/s (read + write) of a copy_ of `nbytes` (64 MB: main memory's) into a preallocated tensor, the best
    median of `tries`."""
    x = torch.randn(nbytes // 4)
    y = torch.empty_like(x)
    best = 0.0
    for _ in range(tries):
        y.copy_(x)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            y.copy_(x)
            times.append(time.perf_counter() - t0)
        best = max(best, 2 * x.numel() * 4 / statistics.median(times) / 1e9)
    return best


class Bandwidth:
    """The copy bandwidth a step of `nbytes` (read + written) is bounded by: a copy_ moving the same bytes, at the
    smallest measured size that holds them. A working set the caches keep is bounded by their rate, memory's
    only beyond them (main memory: the 64 MB copy); below 1 MB torch's own per-copy cost would dominate."""

    MOVED = (1 << 20, 4 << 20, 16 << 20)  # bytes read + written; beyond the last: main memory

    def __init__(self, memory: float, cached: dict[int, float] | None = None):
        self.memory, self.cached = memory, cached or {}

    @classmethod
    def measure(cls, memory: float | None = None) -> "Bandwidth":
        """`memory`: main memory's GB/s when already measured (the best of that and a new measurement counts)."""
        mem = max(memory or 0.0, copy_bandwidth())
        return cls(mem, {n: max(mem, copy_bandwidth(15, 3, n // 2)) for n in cls.MOVED})

    def gbps(self, nbytes: int) -> float:
        return next((self.cached[n] for n in sorted(self.cached) if nbytes <= n), self.memory)

    def seconds(self, nbytes: int) -> float:
        return nbytes / self.gbps(nbytes) / 1e9

    def __str__(self) -> str:
        cached = ", ".join(f"{n >> 20} MB {g:.0f}" for n, g in sorted(self.cached.items()))
        return f"copy bandwidth {self.memory:.1f} GB/s (64 MB)" + (f"; within {cached} GB/s" if cached else "")


def int8_candidates(p: dict) -> dict:
    """oneDNN's int8 calls for problem `p` (an mm, addmm or 2-d convolution; uint8 activations, int8 weights with
    per-channel scales, prepacked; float32 or uint8 results, as PT2E's graphs ask): name -> callable."""
    s, g = p["shapes"], torch.Generator().manual_seed(0)
    u8 = lambda *shape: torch.randint(0, 256, shape, dtype=torch.uint8, generator=g)  # noqa: E731
    s8 = lambda *shape: torch.randint(-127, 128, shape, dtype=torch.int8, generator=g)  # noqa: E731
    x_scale, x_zp = 0.02, 128
    if p["op"] in ("tn.mm", "tn.addmm"):
        (m, k), n = s[0], s[1][1]
        x, w = u8(m, k), s8(n, k)
        ws, wz, bias = torch.rand(n, generator=g) / 100, torch.zeros(n, dtype=torch.int64), None
        if p["op"] == "tn.addmm":
            bias = torch.randn(n, generator=g)
        packed = torch.ops.onednn.qlinear_prepack(w, [m, k])
        q = torch.ops.onednn.qlinear_pointwise
        return {
            f"onednn qlinear -> {name}": (
                lambda out=out, scale=scale: q(x, x_scale, x_zp, packed, ws, wz, bias, scale, 0, out, "none", [], "")
            )
            for name, out, scale in OUTPUTS
        }
    if p["op"] != "tn.convolution" or p["transposed"] or len(s[1]) != 4:
        return {}
    shape_x = s[0] if not p["channels_last"] else [s[0][0], s[0][3], s[0][1], s[0][2]]  # the IR's NHWC as NCHW
    x = u8(*shape_x).contiguous(memory_format=torch.channels_last)
    w = s8(*s[1])
    ws, wz = torch.rand(s[1][0], generator=g) / 100, torch.zeros(s[1][0], dtype=torch.int64)
    bias = torch.randn(s[1][0], generator=g) if len(s) > 2 else None
    conv = (p["stride"], p["padding"], p["dilation"], p["groups"])
    packed = torch.ops.onednn.qconv_prepack(w, ws, x_scale, x_zp, *conv, list(x.shape))
    q = torch.ops.onednn.qconv2d_pointwise
    return {
        f"onednn qconv, channels-last input -> {name}": (
            lambda out=out, scale=scale: q(x, x_scale, x_zp, packed, ws, wz, bias, *conv, scale, 0, out, "none", [], "")
        )
        for name, out, scale in OUTPUTS
    }


def candidates(p: dict) -> dict:
    """Library calls that compute problem `p` alone, on random operands: name -> callable."""
    from irc.targets.cpu.libs import externs

    if p["dtype"] == "int8":
        return int8_candidates(p)
    dtype = getattr(torch, p["dtype"])
    s = p["shapes"]
    r = lambda *shape: torch.randn(*shape, dtype=dtype)  # noqa: E731
    if p["op"] in ("tn.mm", "tn.addmm"):
        (m, k), n = s[0], s[1][1]
        a, b, w, out = r(m, k), r(k, n), r(n, k), torch.empty(m, n, dtype=dtype)
        bias = r(n) if p["op"] == "tn.addmm" else None
        if bias is None:
            c = {
                "torch.mm": lambda: torch.mm(a, b, out=out),
                "torch.mm (weight^T)": lambda: torch.mm(a, w.t(), out=out),
            }
        else:
            c = {
                "torch.addmm": lambda: torch.addmm(bias, a, b, out=out),
                "torch.addmm (weight^T)": lambda: torch.addmm(bias, a, w.t(), out=out),
            }
        kern = externs.LinearKernel(w, bias, constant=True)
        c.update({f"linear {path}": (lambda path=path: kern.run(a, path)) for path in kern.paths()})
        return c
    if p["op"] == "tn.bmm":
        (bt, m, k), n = s[0], s[1][2]
        a, b, bt_, out = r(bt, m, k), r(bt, k, n), r(bt, n, k), torch.empty(bt, m, n, dtype=dtype)
        return {
            "torch.bmm": lambda: torch.bmm(a, b, out=out),
            "torch.bmm (b^T)": lambda: torch.bmm(a, bt_.transpose(1, 2), out=out),
        }
    if p["op"] == "tn.convolution":
        if p["transposed"] or len(s[1]) != 4:
            return {}
        x = r(*s[0])
        if p["channels_last"]:  # (N, H, W, C) in the IR: the same problem as an NCHW one
            x = x.permute(0, 3, 1, 2).contiguous()
        w, b = r(*s[1]), (r(*s[2]) if len(s) > 2 else None)
        kern = externs.ConvKernel(w, b, p["stride"], p["padding"], p["dilation"], p["groups"], constant=True)
        c = {}
        for layout, xs in (("NCHW", x), ("channels-last", x.contiguous(memory_format=torch.channels_last))):
            c.update(
                {f"conv {path}, {layout} input": (lambda path=path, xs=xs: kern.run(xs, path)) for path in kern.paths()}
            )
        return c
    q, k, v = r(*s[0]), r(*s[1]), r(*s[2])
    mask = None if len(s) < 4 else torch.rand(*s[3]) > 0.1 if p["bool_mask"] else r(*s[3])
    return {"sdpa": lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=p.get("scale"))}


def best_time(p: dict, reps: int = 51, budget_s: float = 0.5) -> tuple[float | None, str]:
    """(the fastest median of the candidates for `p`, its name), or (None, "") when none applies. Candidates
    run in turn (externs.measure), up to `reps` rounds or `budget_s` (at least 3): small problems get many."""
    from irc.targets.timing import measure

    c = candidates(p)
    if not c:
        return None, ""
    with torch.no_grad():
        times = measure(c, reps=reps, budget_s=budget_s)
    name = min(times, key=times.get)
    return times[name], name
