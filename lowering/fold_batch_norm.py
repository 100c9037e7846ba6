"""fold-batch-norm: inference BatchNorm after a convolution or a linear layer of constant parameters folds into them.

With s = weight * rsqrt(running_var + eps) per channel (weight 1 when absent):

    bn(conv(x, W, b))          -> conv(x, W * s[:, None, ...], (b - mean) * s + bias)      fold_conv_batch_norm
    bn(add(b, mm(x, Wt)))      -> add((b - mean) * s + bias, mm(x, Wt * s))                 fold_linear_batch_norm
    bn(mm(x, Wt))              -> add(bias - mean * s, mm(x, Wt * s))                       (b absent)

Under autocast a bf16 or f16 convolution meets float32 BatchNorm parameters (eager normalises the rounded
convolution in float32 and rounds again); there the fold computes in float32 from the float32 weight and bias
autocast rounded (the tn.convert's source), and rounds the new weight and bias once to the convolution's type:

    bn(conv(x, convert(W), convert(b)))  -> conv(x, convert(W * s), convert((b - mean) * s + bias))

The new weight and bias are tn ops of constants, which fold-constants then evaluates once. The rules
fire only when every parameter is a constant (a frozen parameter, see fold_constants.ConstantArgs) and
the convolution or product has no other reader; otherwise folding would add work instead of removing it.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, DenseIntOrFPElementsAttr, Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from irc.dialects import tensor as tn
from irc.ir.rules import apply_rules, rule

from .fold_constants import ConstantArgs, Folder


class _Ops(list):
    def add(self, op: Operation) -> SSAValue:
        self.append(op)
        return op.results[0]


def _scale_shift(b: _Ops, bn: tn.BatchNormInferenceOp, bias: SSAValue | None) -> tuple[SSAValue, SSAValue]:
    """(s, shift): s = weight * rsqrt(var + eps), shift = (bias - mean) * s + bn bias, all of shape [C]."""
    el = bn.running_var.type.get_element_type()
    eps = b.add(tn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(el, []), [bn.eps.value.data])))
    s = b.add(tn.RsqrtOp(b.add(tn.AddOp(bn.running_var, eps))))
    if bn.weight is not None:
        s = b.add(tn.MulOp(bn.weight, s))
    centred = b.add(tn.SubOp(bias, bn.running_mean)) if bias is not None else b.add(tn.NegOp(bn.running_mean))
    shift = b.add(tn.MulOp(centred, s))
    if bn.bias is not None:
        shift = b.add(tn.AddOp(shift, bn.bias))
    return s, shift


def _params_known(bn: tn.BatchNormInferenceOp, known, el=None) -> bool:
    el = bn.input.type.get_element_type() if el is None else el
    params = [v for v in (bn.weight, bn.bias, bn.running_mean, bn.running_var) if v is not None]
    return all(known(v) and v.type.get_element_type() == el for v in params)


def _widened(b: _Ops, v: SSAValue | None, wide) -> SSAValue | None:
    """`v` in the wide type: the source of autocast's tn.convert where it is one from that type (the unrounded
    parameter), else `v` converted."""
    if v is None:
        return None
    if isinstance(v.owner, tn.ConvertOp) and v.owner.input.type.get_element_type() == wide:
        return v.owner.input
    return b.add(tn.ConvertOp(v, wide))


def rules(known):
    """The ruleset for one function, `known(value)` telling which values are constants."""

    @rule(tn.BatchNormInferenceOp)
    def fold_conv_batch_norm(op):  # bn(conv(x, W, b)) -> conv(x, W * s, (b - mean) * s + beta)
        conv = op.input.owner
        if not isinstance(conv, tn.ConvolutionOp) or not op.input.has_one_use() or conv.transposed is not None:
            return None
        narrow = op.input.type.get_element_type()
        wide = op.running_var.type.get_element_type()  # float32 under autocast, else the convolution's own type
        mixed = wide != narrow
        if mixed and not (isinstance(wide, Float32Type) and isinstance(narrow, BFloat16Type | Float16Type)):
            return None
        if getattr(conv, "channels_last", None) is not None or not _params_known(op, known, wide):
            return None
        if not known(conv.weight) or (conv.bias is not None and not known(conv.bias)):
            return None
        b = _Ops()
        weight, bias = (_widened(b, v, wide) for v in (conv.weight, conv.bias)) if mixed else (conv.weight, conv.bias)
        s, shift = _scale_shift(b, op, bias)
        w = weight.type
        per_channel = b.add(tn.ReshapeOp(s, TensorType(wide, [w.get_shape()[0]] + [1] * (len(w.get_shape()) - 1))))
        weight = b.add(tn.MulOp(weight, per_channel))
        if mixed:  # one rounding of the folded float32 weight and bias to the convolution's type
            weight, shift = b.add(tn.ConvertOp(weight, narrow)), b.add(tn.ConvertOp(shift, narrow))
        props, attrs = dict(conv.properties), dict(conv.attributes)
        operands, types = [conv.input, weight, shift], [op.result.type]
        b.append(type(conv).create(operands=operands, result_types=types, properties=props, attributes=attrs))
        return b

    @rule(tn.BatchNormInferenceOp)
    def fold_linear_batch_norm(op):  # bn(add(b, mm(x, Wt))) -> add((b - mean) * s + beta, mm(x, Wt * s))
        if len(op.input.type.get_shape()) != 2 or not op.input.has_one_use() or not _params_known(op, known):
            return None
        y, bias = op.input, None
        if isinstance(y.owner, tn.AddOp):
            add = y.owner
            pairs = [(m, c) for m, c in ((add.rhs, add.lhs), (add.lhs, add.rhs)) if isinstance(m.owner, tn.MmOp)]
            if not pairs or pairs[0][1].type != TensorType(
                op.input.type.get_element_type(), [op.input.type.get_shape()[1]]
            ):
                return None
            y, bias = pairs[0]
            if not known(bias) or not y.has_one_use():
                return None
        mm = y.owner
        if not isinstance(mm, tn.MmOp) or not known(mm.rhs):
            return None
        b = _Ops()
        s, shift = _scale_shift(b, op, bias)
        product = b.add(tn.MmOp(mm.lhs, b.add(tn.MulOp(mm.rhs, s)), mm.result.type))
        b.add(tn.AddOp(shift, product, op.result.type))
        return b

    return (fold_conv_batch_norm, fold_linear_batch_norm)


def fold_batch_norm(module: ModuleOp, table: ConstantArgs | None = None) -> bool:
    changed = False
    for f in module.ops:
        if isinstance(f, func.FuncOp) and (table is None or f.sym_name.data == "main"):
            folder = Folder(f, table)
            changed |= apply_rules(f, rules(lambda v: folder._known(v)))
    return changed


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold inference BatchNorm into the convolution or linear layer before it (tn.constant parameters; frozen ones come with the frontend)."""

    name = "fold-batch-norm"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        fold_batch_norm(module)


__all__ = ["FoldBatchNormPass", "fold_batch_norm", "rules"]
