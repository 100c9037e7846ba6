"""tn.qconv / tn.qlinear on the CPU: oneDNN's int8 products (dialects/semantics/quant.py), each weight packed once
and kept while the same tensor arrives unchanged (its storage and version counter), so a frozen graph's int8
weight lives on as the packed copy only: no float copy of it is ever made."""

from irc.dialects.semantics import quant

from .extern_ops import Extern, _dims, _dtype, _into


def qproduct(op, note) -> Extern:
    held: dict = {}
    donated = getattr(op, "accum_donated", None) is not None  # nothing reads the accum after: summed in place

    def packed(x, w, w_scale, w_zp):
        """The packed weight and whether its zero points are all 0, kept while the same tensors arrive unchanged."""
        key = [(t.data_ptr(), t._version, tuple(t.shape)) for t in (w, w_scale, w_zp)] + [tuple(x.shape)]
        if held.get("key") != key:
            held.update(key=key, packed=quant.prepack(op, w, w_scale, list(x.shape)), symmetric=not w_zp.any())
        return held["packed"], held["symmetric"]

    def compute(ins, out):
        t = quant.operands(op, ins)
        pw, symmetric = packed(t["input"], t["weight"], t["w_scale"], t["w_zero_point"])
        return quant.run(op, t, pw, symmetric=symmetric, donated=donated)

    kinds = ", ".join(f"{_dims(v.type.get_shape())}" for v in (op.input, op.weight))
    kinds += " NHWC" if getattr(op, "channels_last", None) is not None else ""
    kinds += ", sum" if getattr(op, "accum", None) is not None else ""
    problem = f"{op.name} {kinds} -> {_dtype(quant.result_dtype(op))}, post-op {op.post_op.data}"
    note(problem, "onednn")
    return Extern(op.name, _into(compute), lambda ins: "onednn")


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


__all__ = ["choose_qparams", "qproduct"]
