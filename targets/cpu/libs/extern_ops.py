"""mem.extern on the CPU: a table keyed by the tn op class an extern's region holds, each entry preparing
an Extern: `run(ins, outs) -> fresh results` calls the library path externs.py's rule picks for the
problem (MKL or oneDNN; decided once per problem and remembered by the extern), `path(ins)` says which.
Each new decision is passed to `note(problem, path)` ("tn.mm 8x64 @ 64x128 float32, constant weight",
"mkldnn_packed"): the compile report's extern paths. A bias add that stands alone, or that a gelu follows, is
oneDNN's (tn.addmm and its epilogue: lowering/fold_bias.py); other epilogues (relu, a residual) are the fused nests
launched after the extern. An
op whose meaning is one torch call of several results (flash attention and its backward, a convolution's
gradients: LIBRARY_CALLS) calls its semantics directly. A region that is none of
these runs through the reference semantics (targets/reference), whatever it holds.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from irc.dialects import memory
from irc.dialects import tensor as tn
from irc.dialects.semantics.bounds import index_checker
from irc.dialects.semantics.nn import NN_SEMANTICS, sdpa_backward_call, sdpa_call
from irc.dialects.semantics.tensor import check_linalg
from irc.ir.types import torch_dtype

from ..runtime import alloc
from . import externs
from .mm_rules import of_argument, small_product


@dataclass(frozen=True)
class Extern:
    """A prepared extern: `run(ins, outs) -> fresh results`; `path(ins)` the library path it takes on these
    operands (for the profiler's event names); `op` its tn op ("tn.mm")."""

    op: str
    run: Callable
    path: Callable


def _fixed(op: str, run: Callable, path: str, problem: str, note) -> Extern:
    """An extern with one path: noted once, when prepared."""
    note(problem, path)
    return Extern(op, run, lambda ins: path)


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


def _dims(shape) -> str:
    return "x".join("?" if n < 0 else str(n) for n in shape)


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def mm_problem(a_shape, b_shape, dtype: torch.dtype, how: str = "", name: str = "tn.mm") -> str:
    """How the report names one mm (or addmm) problem: "tn.mm 8x64 @ 64x128 float32[, how]"."""
    return f"{name} {_dims(a_shape)} @ {_dims(b_shape)} {_dtype(dtype)}{', ' + how if how else ''}"


def _mkl(a, b, bias: list, out, epilogue: str | None = None):
    """MKL's a @ b, eager's call: torch.mm, or torch.addmm with tn.addmm's bias (`bias`: [] or [it]) and then its
    epilogue, in place."""
    fn, args = (torch.addmm, (bias[0], a, b)) if bias else (torch.mm, (a, b))
    return externs.apply_epilogue_(fn(*args, out=out) if out is not None else fn(*args), epilogue)


def _mm(
    op: tn.MmOp | tn.AddmmOp, weight_is_argument: bool = False, note=lambda problem, path: None, planned: bool = False
) -> Extern:
    """`weight_is_argument`: the right operand is a view of a stable graph input (targets/args.ArgSpec.stable: a
    constant or a frozen parameter; never a training graph's weight), so one kernel may hold it prepacked for oneDNN while the same tensor arrives
    unchanged. A weight that does change between calls (training) is not packed again: from then on this
    extern treats it as a plain operand. `planned`: bufferize gave the result a buffer (a product of dynamic sizes):
    oneDNN's plain path, which has no out= form, gives way to MKL's there, which writes it without a copy."""
    (m, k), (_, n) = (v.type.get_shape() for v in (op.lhs, op.rhs))
    epilogue = op.epilogue_name if isinstance(op, tn.AddmmOp) else None  # a gelu fold-bias joined to the call
    if min(m, k, n) >= 0 and small_product(m, k, n):
        # decided now, not per call; noted at the first call, as the others are (a reduce-overhead launcher may run
        # it as sgemm_ instead, and notes that)
        how = "constant weight" if weight_is_argument else ""
        problem = mm_problem((m, k), (k, n), torch_dtype(op.operands[0].type.get_element_type()), how, op.name)
        noted = False

        def small(ins, out):
            nonlocal noted
            if not noted:
                noted = True
                note(problem, "aten")
            return _mkl(ins[0], ins[1], ins[2:], out, epilogue)

        return Extern(op.name, _into(small), lambda ins: "aten")
    chosen: dict = {}
    held: dict = {}
    trial: dict = {}  # the same for calls that only measure (trial_calls), whose random weights stand for the real one

    def kernel(b):
        if not weight_is_argument or held.get("changed"):
            return externs.LinearKernel(b.t(), epilogue=epilogue, constant=False)
        h = trial if _TRIAL.get() else held
        key = (b.data_ptr(), b._version, tuple(b.shape), tuple(b.stride()), b.dtype)
        if h.get("key") != key:
            if "key" in h and h is held:
                held["changed"] = True
                return externs.LinearKernel(b.t(), epilogue=epilogue, constant=False)
            h.update(key=key, kernel=externs.LinearKernel(b.t(), epilogue=epilogue, constant=True))
        return h["kernel"]

    def choose(a, k):
        key = (tuple(a.shape), externs.unit_rows(a), tuple(k.weight.shape), a.dtype, k.constant)  # the rule reads each
        path = chosen.get(key)
        if path is None:  # a small product stays on MKL's own (single-threaded) path: no thread wake-up
            path = "aten" if small_product(a.shape[0], a.shape[1], k.weight.shape[0]) else k.choose(a)
            path = chosen[key] = "aten" if planned and path == "mkldnn" else path
            how = "constant weight" if k.constant else "weight changes" if weight_is_argument else ""
            note(mm_problem(a.shape, k.weight.shape[::-1], a.dtype, how, op.name), path)
        return path

    def compute(ins, out):
        a, b, *bias = ins  # tn.addmm: its bias, added in the library call
        k = kernel(b)
        path = choose(a, k)
        return _mkl(a, b, bias, out, epilogue) if path == "aten" else k.run(a, path, *bias)

    return Extern(op.name, _into(compute), lambda ins: choose(ins[0], kernel(ins[1])))


_TRIAL = contextvars.ContextVar("irc_extern_trial", default=False)


@contextmanager
def trial_calls():
    """Calls that only measure (max-autotune's runs on random inputs): a product by a stable weight keeps apart
    what it learns from them, so the first real call still takes its weight as the constant to prepack. (Otherwise
    it would take the random weight as that constant, see the real one as a change and never pack it again: the
    product would stay on the slower unpacked path for good.)"""
    token = _TRIAL.set(True)
    try:
        yield
    finally:
        _TRIAL.reset(token)


def _types(op, sep: str = ", ") -> str:
    """The operand shapes and element type of `op` as the report names a problem: "2x8x16 @ 2x16x8 float32"."""
    shapes = sep.join(_dims(v.type.get_shape()) for v in op.operands)
    return f"{shapes} {_dtype(torch_dtype(op.operands[0].type.get_element_type()))}"


def _bmm(op, note) -> Extern:
    run = _into(lambda ins, out: externs.bmm(ins[0], ins[1], out=out))
    return _fixed(op.name, run, "aten", f"{op.name} {_types(op, ' @ ')}", note)  # MKL's batched sgemm: the one path


def _convolution(op, weight_is_argument: bool = False, note=lambda problem, path: None) -> Extern | None:
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

    def operands(ins):
        x, w, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
        return (x.movedim(-1, 1) if last else x), kernel(w, b)

    def choose(x, k):
        key = (tuple(x.shape), tuple(x.stride()), tuple(k.weight.shape), x.dtype, k.constant)
        path = chosen.get(key)
        if path is None:
            path = chosen[key] = k.choose(x, channels_last=last)  # an NHWC region's input may still be an NCHW view
            layout = (
                "NCHW"
                if x.is_contiguous()
                else "channels-last"
                if x.is_contiguous(memory_format=torch.channels_last)
                else "strided"
            )
            layout = "NHWC region" if last else layout  # computed channels-last whatever the view's strides
            weight = ", constant weight" if k.constant else ""
            note(
                f"{op.name} {_dims(x.shape)} * {_dims(k.weight.shape)} {_dtype(x.dtype)}, {layout} input{weight}", path
            )
        return path

    def compute(ins, out):
        x, k = operands(ins)
        y = k.run(x, choose(x, k))
        if last and out is not None:
            out.movedim(-1, 1).copy_(y)  # both channels-last: a plain copy
            return out
        return y.movedim(1, -1).contiguous() if last else y

    return Extern(op.name, _into(compute), lambda ins: choose(*operands(ins)))


def _reshape(op, note) -> Extern:
    """A reshape the mem stage could not alias (a strided source): one strided copy into the out buffer."""

    def run(ins, outs):
        x = ins[0]
        if outs:
            outs[0].view(x.shape).copy_(x)
            return []
        dyn = iter(int(n) for n in ins[1:])
        return [x.reshape([next(dyn) if d < 0 else d for d in op.result.type.get_shape()]).contiguous()]

    return Extern(op.name, run, lambda ins: "copy")  # irc's own copy, no library path to report


def _embedding_backward(op: tn.EmbeddingBackwardOp, note) -> Extern | None:
    """tn.embedding_backward into its out buffer: zeroed, the rows of grad added at their indices, the padding row
    zeroed again, in a buffer from the runtime's pool (alloc.py), its pages already mapped: aten's call builds a fresh
    zero table, and a vocabulary-sized table's first-touch page faults cost more every step than the sums, which
    the reference path would then copy. The sums run in aten's order: the same bits. In bfloat16 and float16 the rows
    the indices name are summed in float32 and rounded once (torch's decomposition, inductor's: aten's CPU kernel
    rounds after every add, so a row many indices share loses their small terms)."""
    dtype = torch_dtype(op.grad.type.get_element_type())
    if op.scale_grad_by_freq is not None or dtype not in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        return None  # rows divided by their index's count: aten's own call
    padding, table = op.padding_idx.value.data, op.result.type.get_shape()[0]  # table: DYN when an operand gives it
    narrow = dtype in (torch.bfloat16, torch.float16)

    def run(ins, outs):
        grad, idx = ins[0], ins[1]
        width = grad.shape[-1]
        rows = int(ins[2]) if len(ins) > 2 else table
        if outs:
            out = outs[0]
        else:  # pooled: its pages already mapped
            out = alloc.empty((rows, width), (width, 1), grad.dtype)
        idx, grad = idx.reshape(-1), grad.reshape(-1, width)
        if narrow:  # float32 sums of the rows the indices name only, rounded once into the zeroed table
            rows_hit, which = torch.unique(idx, return_inverse=True)
            sums = torch.zeros((rows_hit.numel(), width)).index_add_(0, which, grad.float())
            out.zero_().index_copy_(0, rows_hit, sums.to(grad.dtype))
        else:
            out.zero_().index_add_(0, idx, grad)
        if padding >= 0:
            out[padding].zero_()  # aten skips those rows; their sum is dropped alike
        return [] if outs else [out]

    problem = f"{op.name} {_dims(op.grad.type.get_shape())}, {_dims(op.indices.type.get_shape())} {_dtype(dtype)}"
    return _fixed(op.name, run, "index_add_f32" if narrow else "index_add", problem, note)


def _check_index(op: tn.CheckIndexOp) -> Extern:
    """The bounds check before a gather: it writes nothing (the gather reads the indices' own buffer), it only raises."""
    check = index_checker(op)

    def run(ins, outs):
        check(*ins)
        return []

    return Extern(op.name, run, lambda ins: "check")


def _check_linalg(op: tn.CheckLinalgOp) -> Extern:
    """linalg's error check after a factorization: it writes nothing, it only raises eager's LinAlgError."""

    def run(ins, outs):
        check_linalg(op, *ins)
        return []

    return Extern(op.name, run, lambda ins: "check")


CHECKS: dict[type, Callable] = {tn.CheckIndexOp: _check_index, tn.CheckLinalgOp: _check_linalg}
"""The checks: an extern whose region starts with one (and writes nothing) only raises."""

EXTERNS: dict[type, Callable] = {
    tn.ReshapeOp: _reshape,
    tn.MmOp: _mm,
    tn.BmmOp: _bmm,
    tn.ConvolutionOp: _convolution,
    tn.EmbeddingBackwardOp: _embedding_backward,
}
"""tn op class -> prepare(op, note) -> Extern (or None: this instance goes to the reference)."""

# The int8 products register themselves (quant.py builds on this module's helpers): imported last, whichever of the
# two modules is imported first.
from . import quant  # noqa: E402, F401


LIBRARY_CALLS = (tn.ScaledDotProductAttentionOp, tn.ScaledDotProductAttentionBackwardOp, tn.ConvolutionBackwardOp)
"""tn ops whose meaning (dialects/semantics) is one torch library call, of one result or several: torch's flash
attention and its backward, a convolution's gradients."""
_PREPARED = {tn.ScaledDotProductAttentionOp: sdpa_call, tn.ScaledDotProductAttentionBackwardOp: sdpa_backward_call}
"""Library calls whose meaning comes with its attributes read once (a transformer calls attention every layer)."""


def _single_op(ext: memory.ExternOp):
    """The op of a region that is exactly `%r... = op(block args in order); mem.yield` of its results, else None."""
    ops = list(ext.body.block.ops)
    if len(ops) != 2 or not isinstance(ops[1], memory.YieldOp) or not ops[0].results:
        return None
    inner = ops[0]
    values = list(ops[1].values)
    if (
        list(inner.operands) != list(ext.body.block.args)
        or len(values) != len(inner.results)
        or set(values) != set(inner.results)
    ):
        return None
    return inner


def _by_yield(compute: Callable, n_out: int) -> Callable:
    """run(ins, outs) from compute(ins) -> the values a region yields: the first n_out fill the out buffers, the
    rest come back as they are computed (contiguous)."""

    def run(ins, outs):
        values = compute(ins)
        for buf, v in zip(outs, values):
            buf.copy_(v)
        return [v.contiguous() for v in values[n_out:]]

    return run


def _library_call(inner, ext: memory.ExternOp, note) -> Extern:
    """`inner`'s own semantics, called without the interpreter. bufferize takes heads-last attention's results and
    a convolution's gradients as torch allocates them (in the layouts it writes them: no copy)."""
    prepared = _PREPARED.get(type(inner))
    call = prepared(inner) if prepared is not None else functools.partial(NN_SEMANTICS[type(inner)], inner)
    order = [list(inner.results).index(v) for v in ext.body.block.last_op.values]

    def compute(ins):
        results = call(*ins)
        results = results if isinstance(results, tuple) else (results,)
        return [results[i] for i in order]

    return _fixed(inner.name, _by_yield(compute, len(ext.outs)), "aten", f"{inner.name} {_types(inner)}", note)


_ALLOCATING = (
    tn.MmOp,
    tn.AddmmOp,
    tn.BmmOp,
    tn.ConvolutionOp,
    tn.ConvolutionBackwardOp,
    tn.ScaledDotProductAttentionOp,
    tn.ScaledDotProductAttentionBackwardOp,
    tn.QConvOp,
    tn.QLinearOp,
    tn.QLinearDynamicOp,
    tn.WeightInt8MmOp,
    tn.WeightInt4MmOp,
)


def allocates(ext: memory.ExternOp) -> bool:
    """Whether the results `ext` returns are always new tensors (a product's, attention's or a convolution's,
    whichever path computes it), never views of its operands."""
    return isinstance(_single_op(ext), _ALLOCATING)


def prepare(
    ext: memory.ExternOp, interpreter: Callable, note=lambda problem, path: None, stable: frozenset[int] = frozenset()
) -> tuple[Extern, str]:
    """(the Extern, "library" | "reference") for one extern; `interpreter()` gives the mem-stage reference
    interpreter (targets/reference/memory.py) of the module; `note(problem, path)` hears each path decided;
    `stable`: the positions of @main's stable arguments (weights a library path may keep prepacked)."""
    if type(check := ext.body.block.first_op) in CHECKS:
        return CHECKS[type(check)](check), "library"
    inner = _single_op(ext)
    if isinstance(inner, tn.MmOp | tn.AddmmOp):
        return _mm(inner, of_argument(ext.ins[1], stable), note, planned=bool(ext.outs)), "library"
    if isinstance(inner, tn.ConvolutionOp):
        found = _convolution(inner, of_argument(ext.ins[1], stable), note)
        if found is not None:
            return found, "library"
    elif type(inner) in LIBRARY_CALLS:
        return _library_call(inner, ext, note), "library"
    elif inner is not None and type(inner) in EXTERNS:
        found = EXTERNS[type(inner)](inner, note)
        if found is not None:
            return found, "library"
    ops = ", ".join(o.name for o in list(ext.body.block.ops)[:-1])
    note(f"{ops} (a region irc has no library call for)", "reference")
    return Extern(ops, _reference(ext, interpreter()), lambda ins: "reference"), "reference"


def _reference(ext: memory.ExternOp, interpreter) -> Callable:
    return _by_yield(lambda ins: interpreter.run_ssacfg_region(ext.body, tuple(ins), "mem.extern"), len(ext.outs))


__all__ = ["EXTERNS", "Extern", "allocates", "mm_problem", "prepare"]
