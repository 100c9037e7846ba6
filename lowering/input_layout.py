"""input-layout: an argument the caller lays out in a permuted order, read across its lines by a reducing nest, is
copied row-major first.

A backward receives a forward's channels-last activations (dynamo/saved_layouts.py hands them over as the forward
computed them) beside row-major gradients, and its fused batch-norm gradient reduces them all in one nest over
(N, C, H, W): each step of its innermost dim then reads the channels-last argument one element per cache line, the
whole tensor over again for every line. A nest that only maps (no reduction) reads such a buffer in transposed
tiles (targets/cpu/codegen/transpose.py); a reducing nest cannot. So before the first nest that would, a copy:

    %r = loop.nest (N, C, H, W) reduction ... {                 %c = loop.nest (N, C, H, W) { loop.load %x[d0, d1, d2, d3] }
      loop.load %x[d0, d1, d2, d3]      (%x NHWC)         ->    %r = loop.nest (N, C, H, W) reduction ... {
                                                                  loop.load %c[d0, d1, d2, d3]

The copy is a transposed copy, which the emitter blocks in tiles: one pass over the argument and one over the copy,
where the reducing nest made one over the argument per line of it. `irc.input_layout` on @main (which the backend
records from the example inputs' strides) says which arguments are permuted and how.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import loop
from irc.ir.types import DYN

from .loop_builder import NestBuilder
from .output_layout import INPUT_ATTR, orders_of


def read_across_lines(ld: loop.LoadOp, nest: loop.NestOp, order: tuple[int, ...]) -> bool:
    """Does `ld`, a load of a buffer laid out in `order` (dims outermost first), step across its lines along the
    nest's innermost dim, where a row-major copy would be read along its lines (the innermost dim moves its last
    index only)?"""
    inner, results = nest.rank - 1, ld.map.data.results
    if ld.indices or nest.rank == 0 or len(results) != len(order):
        return False
    moves = [inner in e.used_dims() for e in results]
    return not moves[order[-1]] and moves[-1] and sum(moves) == 1


@dataclass(frozen=True)
class InputLayoutPass(ModulePass):
    """A permuted argument a reducing nest reads across its lines is read from a row-major copy (module docstring)."""

    name = "input-layout"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        for f in module.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks and (orders := orders_of(f, INPUT_ATTR)):
                _copy_permuted_arguments(f, orders)


def _permuted(v: SSAValue, f: func.FuncOp, orders) -> tuple[int, ...] | None:
    """The order of v, an argument of f laid out permuted (irc-opt's input may say anything) with a static shape; else
    None."""
    if not isinstance(v, BlockArgument) or v.block is not f.body.block or v.index >= len(orders):
        return None
    order = orders[v.index]
    if sorted(order) != list(range(len(order))) or order == tuple(range(len(order))) or DYN in v.type.get_shape():
        return None
    return order


def _copy_permuted_arguments(f: func.FuncOp, orders) -> None:
    block = f.body.block
    copies: dict[SSAValue, SSAValue] = {}
    for nest in [op for op in block.ops if isinstance(op, loop.NestOp)]:
        if not nest.reduction_dims():
            continue
        for ld in [op for op in nest.body.block.ops if isinstance(op, loop.LoadOp)]:
            order = _permuted(ld.source, f, orders)
            if order is None or not read_across_lines(ld, nest, order):
                continue
            if ld.source not in copies:
                b = NestBuilder(ld.source.type.get_shape())
                ops = b.finish([b.load(ld.source, b.dims())], [ld.source.type])
                block.insert_ops_before(ops, nest)
                copies[ld.source] = ops[-1].results[0]
            ld.operands = [copies[ld.source], *ld.operands[1:]]


__all__ = ["InputLayoutPass", "read_across_lines"]
