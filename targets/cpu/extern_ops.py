"""mem.extern on the CPU: a table keyed by the tn op class an extern's region holds, each entry preparing
a callable `run(ins, outs) -> fresh results` that calls the fastest library path (externs.py: MKL or
oneDNN, chosen by measurement once per problem and remembered by the step). Epilogues (bias,
activation, residual) are the fused nests launched after the extern. A region that is not a single
tabled op runs through the reference semantics (targets/reference), whatever it holds.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from xdsl.ir import BlockArgument

from irc.dialects import memory
from irc.dialects import tensor as tn

from irc.dialects.semantics.bounds import index_checker
from . import externs


SMALL_FLOPS = 16e6  # below this a library call's thread wake-ups cost more than its arithmetic


def _into(compute):
    """run(ins, outs) from compute(ins, out) -> tensor (writing `out` when given, else a fresh result)."""

    def run(ins, outs):
        if outs:
            r = compute(ins, outs[0])
            if r is not outs[0]:
                outs[0].copy_(r)
            return []
        return [compute(ins, None)]

    return run


def _mm(op, weight_is_argument: bool = False) -> Callable:
    """`weight_is_argument`: the right operand is a view of a stable graph input (targets/args.ArgSpec.stable: a
    constant or a frozen parameter; never a training graph's weight), so one kernel may hold it prepacked for oneDNN while the same tensor arrives
    unchanged. A weight that does change between calls (training) is not packed again: from then on this
    extern treats it as a plain operand."""
    chosen: dict = {}
    held: dict = {}

    def kernel(b):
        if not weight_is_argument or held.get("changed"):
            return externs.LinearKernel(b.t(), constant=False)
        key = (b.data_ptr(), b._version, tuple(b.shape), tuple(b.stride()), b.dtype)
        if held.get("key") != key:
            if "key" in held:
                held["changed"] = True
                return externs.LinearKernel(b.t(), constant=False)
            held.update(key=key, kernel=externs.LinearKernel(b.t(), constant=True))
        return held["kernel"]

    def compute(ins, out):
        a, b = ins
        k = kernel(b)
        key = (tuple(a.shape), tuple(b.shape), a.dtype, k.constant)
        path = chosen.get(key)
        if path is None:  # a small product stays on MKL's own (single-threaded) path: no thread wake-up
            small = 2 * a.shape[0] * a.shape[1] * b.shape[1] < SMALL_FLOPS
            path = chosen[key] = "aten" if small else k.choose(a)
        if path == "aten":
            return torch.mm(a, b, out=out) if out is not None else torch.mm(a, b)
        return k.run(a, path)

    return _into(compute)


def _bmm(op) -> Callable:
    return _into(lambda ins, out: externs.bmm(ins[0], ins[1], out=out))


def _convolution(op, weight_is_argument: bool = False) -> Callable | None:
    """`weight_is_argument`: the weight is a stable graph input (a constant or a frozen parameter), so a kernel holding
    its prepacked form is reused while the same tensor arrives unchanged (same storage, same version counter)."""
    if op.transposed is not None or len(op.stride.get_values()) != 2:
        return None
    stride, padding, dilation = (list(a.get_values()) for a in (op.stride, op.padding, op.dilation))
    groups = op.groups.value.data
    last = op.channels_last is not None  # NHWC in and out: torch sees channels-last strided NCHW views
    chosen: dict = {}
    held: dict = {}

    def kernel(w, b):
        if not weight_is_argument:
            return externs.ConvKernel(w, b, stride, padding, dilation, groups, constant=False)
        key = [(t.data_ptr(), t._version, tuple(t.shape), tuple(t.stride()), t.dtype) for t in (w, b) if t is not None]
        if held.get("key") != key:
            held.update(key=key, kernel=externs.ConvKernel(w, b, stride, padding, dilation, groups, constant=True))
        return held["kernel"]

    def compute(ins, out):
        x, w, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
        if last:
            x = x.movedim(-1, 1)
        k = kernel(w, b)
        key = (tuple(x.shape), tuple(x.stride()), tuple(w.shape), x.dtype, k.constant)
        path = chosen.get(key)
        if path is None:
            path = chosen[key] = k.choose(x)
        y = k.run(x, path)
        if last and out is not None:
            out.movedim(-1, 1).copy_(y)  # both channels-last: a plain copy
            return out
        return y.movedim(1, -1).contiguous() if last else y

    return _into(compute)


def _sdpa(op) -> Callable:
    """tn.sdpa: torch's scaled_dot_product_attention on the (strided) operand views."""
    from irc.dialects.semantics.nn import sdpa

    scale, masked = op.scale.value.data, op.mask is not None
    return _into(lambda ins, out: sdpa(ins[0], ins[1], ins[2], ins[3] if masked else None, scale))


def _reshape(op) -> Callable:
    """A reshape the mem stage could not alias (a strided source): one strided copy into the out buffer."""

    def run(ins, outs):
        x = ins[0]
        if outs:
            outs[0].view(x.shape).copy_(x)
            return []
        dyn = iter(int(n) for n in ins[1:])
        return [x.reshape([next(dyn) if d < 0 else d for d in op.result.type.get_shape()]).contiguous()]

    return run


def _check_index(op: tn.CheckIndexOp) -> Callable:
    """The bounds check before a gather: it writes nothing (the gather reads the indices' own buffer), it only raises."""
    check = index_checker(op)

    def run(ins, outs):
        check(*ins)
        return []

    return run


EXTERNS: dict[type, Callable] = {
    tn.ReshapeOp: _reshape,
    tn.MmOp: _mm,
    tn.BmmOp: _bmm,
    tn.ConvolutionOp: _convolution,
    tn.ScaledDotProductAttentionOp: _sdpa,
}
"""tn op class -> prepare(op) -> run(ins, outs) (or None: this instance goes to the reference)."""


def _single_op(ext: memory.ExternOp):
    """The op of a region that is exactly `%r = op(block args in order); mem.yield %r`, else None."""
    ops = list(ext.body.block.ops)
    if len(ops) != 2 or not isinstance(ops[1], memory.YieldOp) or len(ops[0].results) != 1:
        return None
    inner = ops[0]
    if list(inner.operands) != list(ext.body.block.args) or list(ops[1].values) != [inner.results[0]]:
        return None
    if len(ext.outs) + len(ext.res) != 1:
        return None
    return inner


def _of_argument(value, stable: frozenset[int]) -> bool:
    """Is `value` a stable graph input (its position in `stable`) or a view of one (a transposed weight)?"""
    while isinstance(value.owner, memory.ViewOp):
        value = value.owner.source
    return isinstance(value, BlockArgument) and value.index in stable


def prepare(ext: memory.ExternOp, interpreter: Callable, stable: frozenset[int] = frozenset()) -> tuple[Callable, str]:
    """(run(ins, outs) -> fresh results, "library" | "reference") for one extern; `interpreter()` gives the
    mem-stage reference interpreter (targets/reference/memory.py) of the module; `stable`: the positions of
    @main's stable arguments (weights a library path may keep prepacked)."""
    if isinstance(check := ext.body.block.first_op, tn.CheckIndexOp):
        return _check_index(check), "library"
    inner = _single_op(ext)
    if isinstance(inner, tn.MmOp):
        return _mm(inner, weight_is_argument=_of_argument(ext.ins[1], stable)), "library"
    if isinstance(inner, tn.ConvolutionOp):
        run = _convolution(inner, weight_is_argument=_of_argument(ext.ins[1], stable))
        if run is not None:
            return run, "library"
    elif inner is not None and type(inner) in EXTERNS:
        run = EXTERNS[type(inner)](inner)
        if run is not None:
            return run, "library"
    return _reference(ext, interpreter()), "reference"


def _reference(ext: memory.ExternOp, interpreter) -> Callable:
    n_out = len(ext.outs)

    def run(ins, outs):
        values = interpreter.run_ssacfg_region(ext.body, tuple(ins), "mem.extern")
        for buf, v in zip(outs, values):
            buf.copy_(v)
        return [v.contiguous() for v in values[n_out:]]

    return run


__all__ = ["EXTERNS", "prepare"]
