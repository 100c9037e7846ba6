"""The layout of an int8 region: oneDNN's convolutions read and write NHWC (fuse-quant puts permutes around each),
so what lies between two of them (the residual adds, dequantize / quantize, relu, max-pooling, the final mean) is
computed NHWC too and their permutes cancel: an elementwise op whose tensor operands are all permuted alike
becomes the op on the unpermuted operands, permuted once after it; pools and reductions take fold-permutes' own
rule. expand-quant runs it on modules that hold a tn.qconv (float graphs keep select-layout's choices).

    add(permute(a, p), permute(b, p), c0)  ->  permute(add(a, b, c0), p)       (c0: a 0-d operand)
"""

from xdsl.dialects.builtin import ModuleOp, UnitAttr

from irc.dialects import tensor as tn
from irc.dialects.tensor.base import Binary, Unary
from irc.ir.rules import apply_rules, rule

from .layout_rules import fold_permute_identity, fold_permute_permute, perm_of, sink_permute_below

ELEMENTWISE = (Unary, Binary, tn.ConvertOp)


@rule(ELEMENTWISE)
def sink_permute_through_elementwise(op):
    rank = len(op.results[0].type.get_shape())
    perms = {perm_of(v.owner) for v in op.operands if v.type.get_shape()}
    if rank == 0 or len(perms) != 1 or None in perms:
        return None
    (p,) = perms
    if any(len(v.type.get_shape()) not in (0, rank) for v in op.operands):
        return None
    inner = [v.owner.input if v.type.get_shape() else v for v in op.operands]
    if isinstance(op, tn.ConvertOp):
        new = tn.ConvertOp(inner[0], op.result.type.get_element_type())
    else:
        new = type(op)(*inner)  # Unary and Binary build their result types from the operands
    return [new, tn.PermuteOp(new.results[0], list(p))]


def donate_accums(module: ModuleOp) -> None:
    """Mark each residual convolution whose accum is another int8 convolution's result (a fresh tensor of its own,
    no view), read otherwise only by int8 products before it (library calls: no fusion moves them after it), not
    its input and not returned: oneDNN then sums into the accum in place, not into a copy (a pass over it saved)."""
    for op in module.walk():
        if not isinstance(op, tn.QConvOp) or op.accum is None or not isinstance(op.accum.owner, tn.QConvOp):
            continue
        block, index = op.parent_block(), op.parent_block().get_operation_index
        others = [u.operation for u in op.accum.uses if u.operation is not op]
        if op.input is not op.accum and all(
            isinstance(u, tn.QConvOp | tn.QLinearOp | tn.QLinearDynamicOp)
            and u.parent_block() is block
            and index(u) < index(op)
            for u in others
        ):
            op.properties["accum_donated"] = UnitAttr()


def nhwc_region(module: ModuleOp) -> None:
    if any(isinstance(op, tn.QConvOp) for op in module.walk()):
        apply_rules(
            module, (sink_permute_through_elementwise, fold_permute_permute, fold_permute_identity, sink_permute_below)
        )
        donate_accums(module)


__all__ = ["nhwc_region"]
