"""Reference semantics of the loop stage: a torch-vectorised evaluator of `loop.nest`.

The whole iteration space is evaluated at once. Dim d's index is an int64 tensor of shape
(1, .., extent_d, .., 1); every body value is a tensor that broadcasts to the space (it keeps
size 1 along the dims it does not vary over), so a load is one gather, a scalar op is one torch
op, and `loop.reduce` is one torch reduction over the reduction dims with keepdim. Index maps are
evaluated by xDSL's AffineExpr.eval on those tensors (torch's // and % floor like Python's). A load index
outside its source is clamped (only a `select` that discards it may produce one: cat, pad).
Scalar ops mean what dialects/semantics (SCALAR) says.
"""

from collections.abc import Callable, Sequence

import torch
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import SSAValue

from irc.dialects import loop
from irc.dialects.semantics import SCALAR, scalar_dtype
from irc.ir.types import torch_dtype


def _gather(src: torch.Tensor, index: list, rank: int) -> torch.Tensor:
    if src.dim() == 0:
        return src.reshape((1,) * rank)
    if src.numel() == 0:  # a load that no point reads (an empty space, or masked by a select): any value will do
        shape = torch.broadcast_shapes(*(torch.as_tensor(i).shape for i in index))
        return torch.zeros((1,) * (rank - len(shape)) + tuple(shape), dtype=src.dtype)
    idx = []
    for i, size in zip(index, src.shape):
        idx.append(
            torch.as_tensor(i).clamp(0, max(size - 1, 0))
            if not isinstance(i, int)
            else min(max(i, 0), max(size - 1, 0))
        )
    if all(isinstance(i, int) for i in idx):
        return src[tuple(idx)].reshape((1,) * rank)
    out = src[tuple(idx)]
    return out.reshape((1,) * (rank - out.dim()) + tuple(out.shape)) if out.dim() < rank else out


_REDUCE = {
    "sum": lambda x, dims: torch.sum(x, dims, keepdim=True, dtype=x.dtype),
    "prod": lambda x, dims: _prod(x, dims),
    "max": lambda x, dims: torch.amax(x, dims, keepdim=True),
    "min": lambda x, dims: torch.amin(x, dims, keepdim=True),
    "any": lambda x, dims: (
        torch.any(x, dim=dims, keepdim=True) if x.dtype == torch.bool else torch.amax(x, dims, keepdim=True)
    ),
    "all": lambda x, dims: (
        torch.all(x, dim=dims, keepdim=True) if x.dtype == torch.bool else torch.amin(x, dims, keepdim=True)
    ),
    "argmax": lambda x, dims: torch.argmax(x, dims[0], keepdim=True),
    "argmin": lambda x, dims: torch.argmin(x, dims[0], keepdim=True),
}


_EMPTY = {"max": float("-inf"), "min": float("inf"), "any": False, "all": True}


def _identity(kind: str, dtype: torch.dtype):
    """_EMPTY[kind] in `dtype`: an integer max starts from the dtype's least value (-inf does not convert)."""
    v = _EMPTY[kind]
    if dtype.is_floating_point or isinstance(v, bool):
        return v
    if dtype is torch.bool:
        return v > 0
    info = torch.iinfo(dtype)
    return info.min if v < 0 else info.max


def _prod(x, dims):
    for d in dims:
        x = torch.prod(x, d, keepdim=True, dtype=x.dtype)
    return x


def extents(nest: loop.NestOp, syms: Sequence[int]) -> list[int]:
    return [int(e.eval([], syms)) for e in nest.extents]


def eval_nest(nest: loop.NestOp, lookup: Callable[[SSAValue], torch.Tensor], syms: Sequence[int]) -> list[torch.Tensor]:
    """The values the nest yields, each broadcastable to the space (size 1 along dims it does not vary over)."""
    sizes = extents(nest, syms)
    rank = len(sizes)
    dims = [torch.arange(n).reshape([n if i == d else 1 for i in range(rank)]) for d, n in enumerate(sizes)]
    red = nest.reduction_dims()
    env: dict[SSAValue, torch.Tensor] = {}
    for op in nest.body.block.ops:
        if isinstance(op, loop.YieldOp):
            return [env[v] for v in op.values]
        args = [env[o] for o in op.operands] if not isinstance(op, loop.LoadOp) else []
        if isinstance(op, loop.LoadOp):
            extra = [env[i] for i in op.indices]
            index = [e.eval(dims + extra, syms) for e in op.map.data.results]
            out = _gather(lookup(op.source), index, rank)
        elif isinstance(op, loop.IndexOp):
            out = torch.as_tensor(op.map.data.results[0].eval(dims, syms), dtype=torch.int64)
        elif isinstance(op, loop.ReduceOp):
            x = args[0]
            if x.dim() < rank:
                x = x.reshape((1,) * (rank - x.dim()) + tuple(x.shape))
            x = x.expand([sizes[d] if d in red else x.shape[d] for d in range(rank)])
            kind = op.kind.data.value
            if x.numel() == 0 and kind in _EMPTY:  # over nothing: the identity (an empty row has max -inf)
                out = torch.full(
                    [1 if d in red else n for d, n in enumerate(x.shape)], _identity(kind, x.dtype), dtype=x.dtype
                )
            else:
                out = _REDUCE[kind](x, red)
        else:
            fn = SCALAR.get(type(op))
            if fn is None:
                raise NotImplementedError(f"reference loop evaluator: no semantics for {op.name}")
            out = fn(op, *args)
        env[op.results[0]] = (
            out.to(scalar_dtype(op.results[0].type)) if out.dtype != scalar_dtype(op.results[0].type) else out
        )
    raise AssertionError("loop.nest body without loop.yield")


def output_shape(nest: loop.NestOp, i: int, sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """(the space's shape for output i, reduced or full, with actual sizes; output i's actual shape)."""
    red = set(nest.reduction_dims()) if nest.output_kind(i) == "reduced" else set()
    space = [1 if d in red else n for d, n in enumerate(sizes)]
    static = nest.space_shape(bool(red))
    inner = iter(n for n, st in zip(space, static) if st != 1)
    out = [1 if n == 1 else next(inner) for n in nest.output_types()[i].get_shape()]
    return space, out


def run_nest(
    nest: loop.NestOp, lookup, syms: Sequence[int], outs: Sequence[torch.Tensor] | None = None
) -> list[torch.Tensor]:
    """Evaluate the nest and materialise its outputs: fresh contiguous tensors, or written into `outs`."""
    values = eval_nest(nest, lookup, syms)
    sizes = extents(nest, syms)
    results = []
    for i, (v, t) in enumerate(zip(values, nest.output_types())):
        space, shape = output_shape(nest, i, sizes)
        v = v.reshape((1,) * (len(space) - v.dim()) + tuple(v.shape)) if v.dim() < len(space) else v
        v = v.expand(space).reshape(shape)
        if outs is not None:
            outs[i].copy_(v)
            results.append(outs[i])
        else:
            results.append(v.to(torch_dtype(t.get_element_type())).clone(memory_format=torch.contiguous_format))
    return results


def view_of(op: loop.ViewOp, src: torch.Tensor, sizes: Sequence[int]) -> torch.Tensor:
    """loop.view as a torch strided view of `src` (no copy)."""
    it = iter(sizes)
    shape = [next(it) if d == loop.DYN else d for d in op.result.type.get_shape()]
    coeffs = loop.linear_coefficients(op.map.data)
    strides = [sum(c[d] * s for (c, _), s in zip(coeffs, src.stride())) for d in range(len(shape))]
    offset = src.storage_offset() + sum(k * s for (_, k), s in zip(coeffs, src.stride()))
    return src.as_strided(shape, strides, offset)


@register_impls
class LoopFunctions(InterpreterFunctions):
    @impl(loop.NestOp)
    def run_nest(self, interpreter: Interpreter, op: loop.NestOp, args):
        syms = [int(a) for a in args[: len(op.symbols)]]
        env = dict(zip(op.inputs(), interpreter.get_values(op.inputs())))
        outs = list(args[len(op.symbols) :]) or None
        results = run_nest(op, env.__getitem__, syms, outs)
        return () if outs else tuple(results)

    @impl(loop.ViewOp)
    def run_view(self, interpreter: Interpreter, op: loop.ViewOp, args):
        return (view_of(op, args[0], [int(a) for a in args[1:]]),)


def make_loop_interpreter(module) -> Interpreter:
    """An interpreter for the tensor and loop stages: func, index arithmetic, tn ops (externs) and loop ops."""
    from xdsl.interpreters.func import FuncFunctions

    from .tensor import IndexFunctions, TensorFunctions

    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), IndexFunctions(), TensorFunctions(), LoopFunctions()):
        interpreter.register_implementations(functions)
    return interpreter


def run_loop_module(module, args, entry: str = "main") -> tuple:
    return make_loop_interpreter(module).call_op(entry, tuple(args))
