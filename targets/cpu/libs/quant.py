"""tn.qconv / tn.qlinear on the CPU: oneDNN's int8 products (dialects/semantics/quant.py), each weight packed once
and kept while the same tensor arrives unchanged (its storage and version counter), so a frozen graph's int8
weight lives on as the packed copy only. On a machine where oneDNN's int8 sums are not exact (no VNNI) fuse-quant
makes no such op (Rules.int8_products); the op's meaning there is the graph's own float chain (dialects/semantics).
tn.weight_int8_mm of more rows than lowering/weight_only.py generates is eager's float product of the int8 weight
widened for one call; tn.weight_int4_mm torch's int4 CPU kernel, which reads the packed weight as stored."""

import threading

import torch

from irc import lifetime
from irc.dialects import tensor as tn
from irc.dialects.semantics import quant

from .extern_ops import EXTERNS, Extern, _dims, _dtype, _into


def qproduct(op, note) -> Extern:
    held: dict = {}
    donated = getattr(op, "accum_donated", None) is not None  # nothing reads the accum after: summed in place

    slots, attrs = quant.slots(op), quant.fixed(op)  # read once: a call touches no IR

    def packed(x, w, w_scale, w_zp):
        """The packed weight, whether its zero points are all 0 and them as int64, kept while the same tensors arrive
        unchanged."""
        key = (w.data_ptr(), w._version, w.shape, w_scale.data_ptr(), w_scale._version)
        key += (w_zp.data_ptr(), w_zp._version, x.shape)
        if held.get("key") != key:
            pw = quant.pack(op, w, w_scale, w_zp, list(x.shape))
            held.update(key=key, packed=pw, symmetric=not w_zp.any(), zp64=w_zp.to(torch.int64))
        return held["packed"], held["symmetric"], held["zp64"]

    def compute(ins, out):
        t = quant.by_name(slots, ins)
        pw, symmetric, zp64 = packed(t["input"], t["weight"], t["w_scale"], t["w_zero_point"])
        return quant.run(op, t, pw, symmetric=symmetric, donated=donated, w_zp64=zp64, attrs=attrs)

    kinds = ", ".join(f"{_dims(v.type.get_shape())}" for v in (op.input, op.weight))
    kinds += " NHWC" if getattr(op, "channels_last", None) is not None else ""
    kinds += ", sum" if getattr(op, "accum", None) is not None else ""
    problem = f"{op.name} {kinds} -> {_dtype(quant.result_dtype(op))}, post-op {op.post_op.data}"
    path = quant.path()  # oneDNN's where its integer sums are exact, else the float chain
    note(problem, path)
    return Extern(op.name, _into(compute), lambda ins: path)


def choose_qparams(op, note) -> Extern:
    """Dynamic quantization's scale and zero point, torch's own function (an aminmax and a few scalar ops)."""
    meaning = quant.QUANT_SEMANTICS[type(op)]

    def run(ins, outs):
        values = meaning(op, ins[0])
        for buf, v in zip(outs, values):
            buf.copy_(v)
        return list(values[len(outs) :])

    note(f"{op.name} {_dims(op.input.type.get_shape())}", "aten")
    return Extern(op.name, run, lambda ins: "aten")


_SCRATCH = threading.local()


@lifetime.on_reset
def _release_scratch() -> None:
    _SCRATCH.__dict__.clear()


def _widened(w: torch.Tensor) -> torch.Tensor:
    """`w` as float32 in one scratch buffer that every weight-only product of this thread shares (the largest weight's
    size): a fresh allocation per call would fault its pages in again each time, a buffer per layer would be the
    float copy of the weights that weight-only quantization exists to avoid."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.numel() < w.numel():
        buf = _SCRATCH.buf = torch.empty(w.numel(), dtype=torch.float32)
    return buf[: w.numel()].view(w.shape).copy_(w)


def weight_int8_mm(op, note) -> Extern:
    """A weight-only int8 linear layer as eager runs it: the int8 weight widened for this call only (into the shared
    scratch buffer, so no float copy of any weight outlives the call), MKL's product, each column times its scale. torch's
    _weight_int8pack_mm, which reads the weight as int8, runs 5x (one row) to 40x (128 rows) slower than this on an
    AVX2-only host and still 40x on 128 rows with AVX-512 (docs/benchmarks.md, Int8). Narrow activations are widened and the result rounded
    once, as irc's widened products are (torch's narrow products run in reference loops on such a host)."""
    dtype = quant.result_dtype(op)
    narrow = dtype != torch.float32

    def compute(ins, out):
        x, w, scale = ins
        if narrow:
            x, scale = x.float(), scale.float()
        y = torch.mm(x, _widened(w).t()).mul_(scale)
        return y.to(dtype) if narrow else y

    (_, k), (n, _) = op.input.type.get_shape(), op.weight.type.get_shape()
    problem = f"{op.name} {_dims(op.input.type.get_shape())} @ int8 {k}x{n} {_dtype(dtype)}"
    note(problem + (", widened" if narrow else ""), "aten")
    return Extern(op.name, _into(compute), lambda ins: "aten")


def weight_int4_mm(op, note) -> Extern:
    """A weight-only int4 linear layer: torch's _weight_int4pack_mm_for_cpu on the packed weight, as eager calls it."""
    meaning = quant.QUANT_SEMANTICS[type(op)]
    (_, k), n = op.input.type.get_shape(), op.result.type.get_shape()[1]
    dtype = _dtype(quant.result_dtype(op))
    note(
        f"{op.name} {_dims(op.input.type.get_shape())} @ int4 {k}x{n} group {op.group_size.value.data} {dtype}", "aten"
    )
    return Extern(op.name, _into(lambda ins, out: meaning(op, *ins)), lambda ins: "aten")


EXTERNS.update({tn.QConvOp: qproduct, tn.QLinearOp: qproduct, tn.QLinearDynamicOp: qproduct})
EXTERNS[tn.ChooseQParamsOp] = choose_qparams
EXTERNS.update({tn.WeightInt8MmOp: weight_int8_mm, tn.WeightInt4MmOp: weight_int4_mm})

__all__ = ["choose_qparams", "qproduct", "weight_int4_mm", "weight_int8_mm"]
