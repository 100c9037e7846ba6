"""The meaning of tn's quantization ops: PT2E's quantized_decomposed functions (torch's own, in
torch/ao/quantization/fx/_decomposed.py, not torchao's) and oneDNN's int8 products.

A per-tensor scale is read as the double eager reads (`.item()`), so the f64 constant the importer keeps for a
Python float scale means the same as the float itself. tn.qconv / tn.qlinear mean oneDNN's call: `pack(op, w, ...)`
packs a weight once (the cpu target keeps it), `run(op, x, packed, ...)` is the product. Where oneDNN would not
compute the integer sums exactly (a machine without VNNI or AMX: `onednn_exact`), or would ignore the weight's zero
points, the product is the graph's own float chain over the weight dequantized once. tn.weight_int8_mm (weight-only
int8) means eager's own chain: the int8 weight widened, the product, the scales; tn.weight_int4_mm torch's own int4
call.
"""

import functools

import torch
import torch.ao.quantization.fx._decomposed  # registers torch.ops.quantized_decomposed

from irc.dialects import tensor as tn
from irc.ir.types import torch_dtype

qd = torch.ops.quantized_decomposed


# tn's post-ops: what PT2E's graph applies after the product, and oneDNN's post-op (name, algorithm) for it
POST_OPS = {
    "none": lambda y: y,
    "relu": torch.relu,
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda y: torch.nn.functional.gelu(y, approximate="tanh"),
}
ONEDNN_POST_OPS = {"none": ("none", ""), "relu": ("relu", ""), "gelu": ("gelu", "none"), "gelu_tanh": ("gelu", "tanh")}


def _int(attr) -> int:
    return attr.value.data


def result_dtype(op) -> torch.dtype:
    return torch_dtype(op.result.type.get_element_type())


def _quantize(op, x, scale, zp=None):
    lo, hi = op.bounds
    if op.axis is None:
        return qd.quantize_per_tensor.tensor(x, scale, zp, lo, hi, result_dtype(op))
    zp = torch.zeros(scale.shape, dtype=torch.int64) if zp is None else zp
    return qd.quantize_per_channel(x, scale, zp, op.axis_value, lo, hi, result_dtype(op))


def _dequantize(op, q, scale, zp=None):
    lo, hi = op.bounds
    out = result_dtype(op)
    if op.axis is None:
        return qd.dequantize_per_tensor.tensor(q, scale, zp, lo, hi, q.dtype, out_dtype=out)
    return qd.dequantize_per_channel(q, scale, zp, op.axis_value, lo, hi, q.dtype, out_dtype=out)


def _q(op) -> tuple[float, int, float, int, torch.dtype]:
    """(x_scale, x_zero_point, out_scale, out_zero_point, result dtype) of a tn.qconv / tn.qlinear."""
    return (
        op.x_scale.value.data,
        _int(op.x_zero_point),
        op.out_scale.value.data,
        _int(op.out_zero_point),
        result_dtype(op),
    )


def _conv_args(op):
    return list(op.stride.get_values()), list(op.padding.get_values()), list(op.dilation.get_values()), _int(op.groups)


@functools.cache
def onednn_exact() -> bool:
    """Whether oneDNN's uint8 x int8 products sum in int32 on this machine: AVX512-VNNI, AVX-VNNI or AMX. Before VNNI
    (AVX2, AVX-512 without it) its kernels add pairs of products in saturating int16 (vpmaddubsw), so an output is
    wrong by whole units wherever two large activations meet two large weights of one sign."""
    caps = torch.cpu.get_capabilities()
    return any(caps.get(k, False) for k in ("avx512_vnni", "avx_vnni", "amx_int8"))


def path() -> str:
    """The path of the int8 products here, as reports name it: oneDNN's, or the graph's float32 chain."""
    return "onednn" if onednn_exact() else "float32"


def pack(op, w: torch.Tensor, w_scale: torch.Tensor, w_zp: torch.Tensor, x_shape=None) -> torch.Tensor:
    """What run() takes for a weight: oneDNN's packed int8 form, or the float32 weight (dequantized, with its zero
    points) where oneDNN would not compute eager's numbers: zero points it ignores, a machine without VNNI."""
    if w_zp.any() or not onednn_exact():
        return qd.dequantize_per_channel(w, w_scale, w_zp, 0, -128, 127, torch.int8)
    return prepack(op, w, w_scale, x_shape)


def prepack(op, w: torch.Tensor, w_scale: torch.Tensor, x_shape=None) -> torch.Tensor:
    """oneDNN's packed form of an int8 weight for `op` (its activations' shape, when known, picks the blocking)."""
    if isinstance(op, tn.QConvOp):
        if x_shape is not None and op.channels_last is not None:
            x_shape = [x_shape[i] for i in (0, 3, 1, 2)]  # oneDNN takes the NCHW sizes
        xs, xz = _q(op)[:2]
        return torch.ops.onednn.qconv_prepack(w, w_scale, xs, xz, *_conv_args(op), x_shape)
    return torch.ops.onednn.qlinear_prepack(w, x_shape)


NAMES = ("input", "weight", "w_scale", "w_zero_point", "bias", "accum", "act_scale", "act_zero_point")


def operands(op, values) -> dict:
    """A tn.qconv / tn.qlinear's operand values by name (None for an absent optional one)."""
    return by_name(slots(op), values)


def slots(op) -> list[tuple[str, int | None]]:
    """Each of NAMES with its operand's position in `op` (None where absent): operands() without the op's IR."""
    where = {v: i for i, v in enumerate(op.operands)}
    return [(n, where[v] if (v := getattr(op, n, None)) is not None else None) for n in NAMES]


def by_name(slots_of_op, values) -> dict:
    return {n: values[i] if i is not None else None for n, i in slots_of_op}


def fixed(op) -> dict:
    """What run() reads of the op's attributes, read once (a call then touches no IR)."""
    conv = isinstance(op, tn.QConvOp)
    return {
        "q": None if isinstance(op, tn.QLinearDynamicOp) else _q(op),
        "conv": _conv_args(op) if conv else None,
        "accum": _accum(op) if getattr(op, "accum", None) is not None else None,
        "post": ONEDNN_POST_OPS[op.post_op.data],
        "channels_last": conv and op.channels_last is not None,
    }


def _nchw(op, t):
    """An NHWC operand of a channels-last tn.qconv as the NCHW view oneDNN takes (its strides channels-last)."""
    return t.permute(0, 3, 1, 2) if t is not None and getattr(op, "channels_last", None) is not None else t


def _chain(op, t: dict, fw: torch.Tensor | None = None):
    """What PT2E's graph computes: dequantize, the float product, the residual, the post-op, quantize (eager's own
    functions), over the dequantized weight `fw` (computed here when not given)."""
    if isinstance(op, tn.QLinearDynamicOp):
        xs, xz, os, oz, dt = t["act_scale"], t["act_zero_point"], 1.0, 0, torch.float32
    else:
        xs, xz, os, oz, dt = _q(op)
    x, acc = _nchw(op, t["input"]), _nchw(op, t["accum"])
    dq = qd.dequantize_per_tensor.tensor if isinstance(xs, torch.Tensor) else qd.dequantize_per_tensor
    fx = dq(x, xs, xz, *_bounds(x.dtype), x.dtype)
    if fw is None:
        fw = qd.dequantize_per_channel(t["weight"], t["w_scale"], t["w_zero_point"], 0, -128, 127, torch.int8)
    if isinstance(op, tn.QConvOp):
        y = torch.nn.functional.conv2d(fx, fw, t["bias"], *_conv_args(op))
    else:
        y = torch.nn.functional.linear(fx, fw, t["bias"])
    if acc is not None:
        y = y + qd.dequantize_per_tensor(acc, *_accum(op), *_bounds(acc.dtype), acc.dtype)
    y = POST_OPS[op.post_op.data](y)
    y = y if dt == torch.float32 else qd.quantize_per_tensor(y, os, oz, *_bounds(dt), dt)
    return _nhwc(op, y)


def _nhwc(op, y):
    return y.permute(0, 2, 3, 1).contiguous() if getattr(op, "channels_last", None) is not None else y


def _accum(op) -> tuple[float, int]:
    return op.accum_scale.value.data, _int(op.accum_zero_point)


def _bounds(dtype: torch.dtype) -> tuple[int, int]:
    return torch.iinfo(dtype).min, torch.iinfo(dtype).max


def run(
    op, t: dict, packed, symmetric: bool | None = None, donated: bool = False, w_zp64=None, attrs=None
) -> torch.Tensor:
    """The int8 product of the operands `t` (by name) with a packed weight (pack()). oneDNN ignores weight zero
    points: a weight with any that is not 0 (`symmetric` False; None: look) takes the graph's own float chain, as
    does a float `packed` weight (pack()'s where oneDNN is not exact). The residual
    (`accum`) goes in as oneDNN's sum post-op, on a copy (oneDNN writes the sum into it) but where the caller
    says it is `donated` (the cpu target, for a tn.qconv marked accum_donated). A caller calling often passes the
    weight's zero points as int64 (`w_zp64`) and fixed(op) (`attrs`), kept from its first call."""
    w_scale, w_zp, bias = t["w_scale"], t["w_zero_point"], t["bias"]
    if packed.is_floating_point():
        return _chain(op, t, packed)
    if not (symmetric if symmetric is not None else not w_zp.any()):
        return _chain(op, t)
    a = attrs or fixed(op)
    (post, algorithm), w_zp = a["post"], w_zp.to(torch.int64) if w_zp64 is None else w_zp64
    if a["q"] is None:  # tn.qlinear_dynamic
        x, xs, xz, f32 = t["input"].contiguous(), t["act_scale"], t["act_zero_point"], torch.float32
        fn = torch.ops.onednn.qlinear_pointwise.tensor
        return fn(x, xs, xz, packed, w_scale, w_zp, bias, 1.0, 0, f32, post, [], algorithm)
    xs, xz, os, oz, dt = a["q"]
    if a["conv"] is None:
        x = t["input"].contiguous()
        fn = torch.ops.onednn.qlinear_pointwise
        return fn(x, xs, xz, packed, w_scale, w_zp, bias, os, oz, dt, post, [], algorithm)
    nhwc, args, cl = a["channels_last"], a["conv"], torch.channels_last
    x = (t["input"].permute(0, 3, 1, 2) if nhwc else t["input"]).contiguous(memory_format=cl)
    if t["accum"] is None:
        fn = torch.ops.onednn.qconv_pointwise
        y = fn(x, xs, xz, packed, w_scale, w_zp, bias, *args, os, oz, dt, post, [], algorithm)
    else:
        acc = t["accum"].permute(0, 3, 1, 2) if nhwc else t["accum"]
        acc = acc if donated else acc.clone(memory_format=cl)
        fn = torch.ops.onednn.qconv2d_pointwise.binary
        y = fn(
            x, xs, xz, packed, w_scale, w_zp, acc, bias, *args, os, oz, dt, *a["accum"], "sum", 1.0, post, [], algorithm
        )
    return y.permute(0, 2, 3, 1).contiguous() if nhwc else y


def _product(op, *values):
    t = operands(op, values)
    return run(op, t, pack(op, t["weight"], t["w_scale"], t["w_zero_point"]))


def _choose_qparams(op, x):
    lo, hi, eps = _int(op.quant_min), _int(op.quant_max), op.eps.value.data
    return qd.choose_qparams.tensor(x, lo, hi, eps, getattr(torch, op.dtype.data))


def weight_int8_mm(op, x, w, scale):
    """torchao's weight-only int8 linear as eager runs it: the weight widened to the activations' dtype, the
    product, then each column times its scale."""
    return torch.mm(x, w.t().to(x.dtype)) * scale


def weight_int4_mm(op, x, w, scale_and_zero):
    """torch's int4 CPU product (tinygemm's layout), as eager calls it."""
    return torch.ops.aten._weight_int4pack_mm_for_cpu(x.contiguous(), w, op.group_size.value.data, scale_and_zero)


QUANT_SEMANTICS = {
    tn.ChooseQParamsOp: _choose_qparams,
    tn.QLinearDynamicOp: _product,
    tn.QuantizeOp: _quantize,
    tn.DequantizeOp: _dequantize,
    tn.QConvOp: _product,
    tn.QLinearOp: _product,
    tn.WeightInt4MmOp: weight_int4_mm,
    tn.WeightInt8MmOp: weight_int8_mm,
}

__all__ = [
    "QUANT_SEMANTICS",
    "onednn_exact",
    "operands",
    "pack",
    "path",
    "prepack",
    "run",
    "weight_int4_mm",
    "weight_int8_mm",
]
