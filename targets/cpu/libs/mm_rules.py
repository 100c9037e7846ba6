"""Which library path an f32 matrix product takes and how it is computed, decided before any call from the loop or
mem stage: the rule LinearKernel.choose applies at run time (externs.py), read by bufferize (a product oneDNN
allocates), fold-bias (a product oneDNN adds a bias to), the reduce-overhead launchers (a product they may run as
sgemm_) and orient-products (a product MKL runs faster as its transpose)."""

from __future__ import annotations

import torch
from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation
from xdsl.ir.affine import AffineExpr

from irc.dialects import loop, memory
from irc.dialects import tensor as tn
from irc.ir.types import DYN, torch_dtype

from . import externs, tuning


def small_product(m: int, k: int, n: int) -> bool:
    """An m x k @ k x n product below tuning.SMALL_FLOPS: it stays on torch.mm (MKL's own path), whatever its
    operands."""
    return 2 * m * k * n < tuning.SMALL_FLOPS


def of_argument(value, stable: frozenset[int]) -> bool:
    """Is `value` a stable graph input (its position in `stable`) or a view of one (a transposed weight), at the
    mem stage or the loop stage?"""
    while isinstance(value.owner, memory.ViewOp | loop.ViewOp):
        value = value.owner.source
    return isinstance(value, BlockArgument) and value.index in stable


def mm_path(ext: memory.ExternOp, stable: frozenset[int], m: int, k: int, n: int, unit_rows: bool) -> str:
    """The path the rule (_mm, then LinearKernel.choose) gives this f32 mm extern of static sizes m x k @ k x n,
    known before any call. The reduce-overhead launchers take over (as sgemm_) only a product whose path is
    aten: the others stay this extern, so every mode rounds as the default does."""
    return rule_path(of_argument(ext.ins[1], stable), m, k, n, unit_rows)


def allocates_result(op: Operation, stable: frozenset[int]) -> bool:
    """Does the library call of this loop-stage op allocate its result? An f32 or bf16 product of static sizes that
    the rule sends to oneDNN (a bf16 one: externs.onednn_bf16, or a gelu epilogue): torch returns a fresh tensor,
    with no out= form."""
    dtype = torch_dtype(op.result.type.get_element_type()) if isinstance(op, tn.MmOp | tn.AddmmOp) else None
    if dtype not in (torch.float32, torch.bfloat16):
        return False
    (m, k), (_, n) = (v.type.get_shape() for v in (op.lhs, op.rhs))
    if DYN in (m, k, n):
        return False
    epilogue = op.epilogue_name if isinstance(op, tn.AddmmOp) else None
    constant = of_argument(op.operands[1], stable)
    return rule_path(constant, m, k, n, _unit_rows(op.operands[0]), dtype, epilogue) != "aten"


def _unit_rows(v) -> bool:
    """Will the value's rows be contiguous? A computed value or argument is taken as row-major (the runtime rule
    checks the argument's strides at the call); a view keeps unit rows where its last dim walks its source's
    last dim, one element a step (a row picked out of a batch), not where it transposes."""
    if not isinstance(v.owner, loop.ViewOp):
        return True
    last = AffineExpr.dimension(len(v.type.get_shape()) - 1)
    results = v.owner.map.data.results
    return bool(results) and results[-1] == last and last not in results[:-1] and _unit_rows(v.owner.source)


def computes_transposed(op: Operation, args, stable: frozenset[int]) -> bool:
    """Does the library run this loop-stage product faster as its transpose (lowering/orient_products.py)? A row-major
    a of at most tuning.TRANSPOSED_MAX_ROWS rows times the transposing view of a row-major b (a linear layer's
    weight), on aten's path: MKL's sgemm computes x @ W^T with few rows faster as W @ x^T (a column-major result),
    by less as the rows grow, and loses at a few thousand rows; a bf16 one with 2 to 128 rows where torch runs bf16
    products on oneDNN's AMX kernels (externs.amx_bf16_products), which reorder x @ W^T's weight in every call.
    Other operand layouts (g @ W, g^T @ x: a backward's) gain nothing or lose, so only this one turns. `args`: @main's
    ArgSpecs (an argument's strides are guarded as compiled); `stable`: the positions of its stable ones."""
    dtype = torch_dtype(op.result.type.get_element_type()) if isinstance(op, tn.MmOp) else None
    if dtype not in (torch.float32, torch.bfloat16) or dtype == torch.bfloat16 and not externs.amx_bf16_products():
        return False
    (m, k), (_, n) = (v.type.get_shape() for v in op.operands)
    view = op.operands[1].owner
    if DYN in (m, k, n) or not isinstance(view, loop.ViewOp) or view.sizes or not _row_major(op.operands[0], args):
        return False
    if dtype == torch.float32:
        rows = m <= tuning.TRANSPOSED_MAX_ROWS and min(k, n) >= tuning.TRANSPOSED_MIN_SIDE
    else:  # oneDNN's AMX kernel: W @ x^T runs faster for few rows whatever the sides (tuning.TRANSPOSED_BF16_ROWS)
        low, high = tuning.TRANSPOSED_BF16_ROWS
        rows = low <= m <= high and not small_product(m, k, n)
    if any(isinstance(u.operation, func.ReturnOp) for u in op.result.uses):  # copied back row-major (one pass)
        rows = rows and m <= tuning.TRANSPOSED_RETURNED_ROWS
    return (
        rows
        and view.map.data.results == (AffineExpr.dimension(1), AffineExpr.dimension(0))
        and _row_major(view.source, args)
        and rule_path(of_argument(op.operands[1], stable), m, k, n, True, dtype) == "aten"
    )


def _row_major(v, args) -> bool:
    """A contiguous 2-d value: an argument with row-major strides, or a result of a kernel or another product."""
    if isinstance(v, BlockArgument):
        spec = args[v.index] if v.index < len(args) else None
        return spec is not None and len(spec.sizes) == 2 and tuple(spec.strides) == (spec.sizes[1], 1)
    return isinstance(v.owner, loop.NestOp | tn.MmOp)


def rule_path(
    constant: bool,
    m: int,
    k: int,
    n: int,
    unit_rows: bool,
    dtype: torch.dtype = torch.float32,
    epilogue: str | None = None,
) -> str:
    """The path of a product of these sizes: _mm's small-product rule, then LinearKernel's."""
    if small_product(m, k, n):
        return "aten"
    return externs.linear_rule(externs.linear_paths(dtype, constant), dtype, unit_rows, epilogue)
