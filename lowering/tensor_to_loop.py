"""tensor-to-loop: each tn op becomes one `loop.nest` whose body computes one output element with arith/math.

Elementwise ops are one table (BODY: tn op -> scalar body); reductions, views, creation and the
nn ops have a lowering function each (here, in lower_views.py and lower_nn.py). An op with no
loop form stays a tn op: matmul, convolution and the other externs (torch's tuned kernels),
`tn.aten_call` fallbacks, and ops whose types or shapes a nest cannot express (EXTERN_REASON).
"""

import math as pymath
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp, i1
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir import apply_rules
from irc.ir.types import DYN, is_float

from . import index_range
from .loop_builder import OP_ROUNDING, NestBuilder, Unsupported, broadcast_exprs, compute_type, shape

LOWER: dict[type[Operation], Callable[[Operation], list[Operation]]] = {}


def lowers(*classes):
    def register(fn):
        for c in classes:
            LOWER[c] = fn
        return fn

    return register


# -- elementwise ---------------------------------------------------------------------------------


def _float_only(cls):
    def body(b: NestBuilder, x):
        if not is_float(x.type):
            raise Unsupported(f"{cls.name} on {x.type}")
        return b.math(cls, x)

    return body


def _round(cls):
    return lambda b, x: b.math(cls, x) if is_float(x.type) else x


def _abs(b, x):
    if x.type == i1:
        return x
    return b.math(math.AbsFOp if is_float(x.type) else math.AbsIOp, x)


def _sign(b, x):
    if x.type == i1:
        return x
    zero = b.like(0, x)  # torch: sign(nan) and sign(-0.0) are +0.0
    neg = b.select(b.cmp("lt", x, zero), b.like(-1, x), zero)
    return b.select(b.cmp("gt", x, zero), b.like(1, x), neg)


def _relu(b, x):
    return x if x.type == i1 else b.max(x, b.like(0, x))


def _sigmoid(b, x):
    one = b.like(1, x)
    return b.div(one, b.add(one, b.fexp(b.neg(x))))


def _bitwise_not(b, x):
    return b.emit(arith.XOrIOp(x, b.like(1 if x.type == i1 else -1, x)))


def gelu_body(b, x, approximate: str):
    """gelu(x) in a nest's body: tn.gelu's lowering (fold-bias recognises it after a product's bias add)."""
    half, one = b.like(0.5, x), b.like(1, x)
    if approximate == "tanh":
        inner = b.mul(
            b.like(pymath.sqrt(2 / pymath.pi), x), b.add(x, b.mul(b.like(0.044715, x), b.mul(x, b.mul(x, x))))
        )
        return b.mul(b.mul(half, x), b.add(one, b.math(math.TanhOp, inner)))
    return b.mul(b.mul(x, half), b.add(one, b.math(math.ErfOp, b.mul(x, b.like(pymath.sqrt(0.5), x)))))


def _isnan(b, x):
    return b.emit(arith.CmpfOp(x, x, "uno")) if is_float(x.type) else b.const(0, i1)


def _isinf(b, x):
    if not is_float(x.type):
        return b.const(0, i1)
    return b.emit(arith.CmpfOp(b.math(math.AbsFOp, x), b.like(float("inf"), x), "oeq"))


def _signbit(b, x):
    if x.type == i1:
        return b.const(0, i1)
    if is_float(x.type):
        from xdsl.dialects.builtin import IntegerType

        x = b.emit(arith.BitcastOp(x, IntegerType(x.type.bitwidth)))
    return b.cmp("lt", x, b.like(0, x))


def _floordiv(b, x, y):
    if is_float(x.type):
        return b.math(math.FloorOp, b.div(x, y))
    return b.emit(arith.FloorDivSIOp(x, y))


def _truncdiv(b, x, y):
    return b.math(math.TruncOp, b.div(x, y)) if is_float(x.type) else b.emit(arith.DivSIOp(x, y))


def _fmod(b, x, y):
    if is_float(x.type):
        return b.sub(x, b.mul(b.math(math.TruncOp, b.div(x, y)), y))
    return b.emit(arith.RemSIOp(x, y))


def _remainder(b, x, y):
    if is_float(x.type):
        return b.sub(x, b.mul(b.math(math.FloorOp, b.div(x, y)), y))
    r = b.emit(arith.RemSIOp(x, y))
    zero = b.like(0, r)
    fix = b.emit(arith.AndIOp(b.cmp("ne", r, zero), b.emit(arith.XOrIOp(b.cmp("lt", r, zero), b.cmp("lt", y, zero)))))
    return b.select(fix, b.add(r, y), r)


def _pow(b, x, y):
    return b.math(math.PowFOp if is_float(x.type) else math.IPowIOp, x, y)


def _float_binary(cls):
    def body(b, x, y):
        if not is_float(x.type):
            raise Unsupported(f"{cls.name} on {x.type}")
        return b.math(cls, x, y)

    return body


def _int_binary(cls):
    def body(b, x, y):
        if is_float(x.type):
            raise Unsupported(f"{cls.name} on {x.type}")
        return b.emit(cls(x, y))

    return body


def _compare(pred):
    return lambda b, x, y: b.cmp(pred, x, y)


def _hypot(b, x, y):
    return b.math(math.SqrtOp, b.add(b.mul(x, x), b.mul(y, y)))


def _div(b, x, y):
    if not is_float(x.type):
        raise Unsupported(f"tn.div on {x.type}")
    return b.div(x, y)


BODY: dict[type[Operation], Callable] = {
    tn.NegOp: lambda b, x: b.neg(x),
    tn.AbsOp: _abs,
    tn.SignOp: _sign,
    tn.ReluOp: _relu,
    tn.SigmoidOp: _sigmoid,
    tn.ReciprocalOp: lambda b, x: b.div(b.like(1, x), x) if is_float(x.type) else _div(b, x, x),
    tn.BitwiseNotOp: _bitwise_not,
    tn.FloorOp: _round(math.FloorOp),
    tn.CeilOp: _round(math.CeilOp),
    tn.RoundOp: _round(math.RoundEvenOp),
    tn.TruncOp: _round(math.TruncOp),
    tn.IsNanOp: _isnan,
    tn.IsInfOp: _isinf,
    tn.SignbitOp: _signbit,
    tn.LogicalNotOp: lambda b, x: b.emit(arith.XOrIOp(b.cast(x, i1), b.const(1, i1))),
    tn.AddOp: lambda b, x, y: b.add(x, y),
    tn.SubOp: lambda b, x, y: b.sub(x, y),
    tn.MulOp: lambda b, x, y: b.mul(x, y),
    tn.DivOp: _div,
    tn.FloorDivOp: _floordiv,
    tn.TruncDivOp: _truncdiv,
    tn.RemainderOp: _remainder,
    tn.FmodOp: _fmod,
    tn.PowOp: _pow,
    tn.MaximumOp: lambda b, x, y: b.max(x, y),
    tn.MinimumOp: lambda b, x, y: b.min(x, y),
    tn.Atan2Op: _float_binary(math.Atan2Op),
    tn.CopysignOp: _float_binary(math.CopySignOp),
    tn.HypotOp: _hypot,
    tn.BitwiseAndOp: lambda b, x, y: b.emit(arith.AndIOp(x, y)),
    tn.BitwiseOrOp: lambda b, x, y: b.emit(arith.OrIOp(x, y)),
    tn.BitwiseXorOp: lambda b, x, y: b.emit(arith.XOrIOp(x, y)),
    tn.ShiftLeftOp: _int_binary(arith.ShLIOp),
    tn.ShiftRightOp: _int_binary(arith.ShRSIOp),
    tn.EqOp: _compare("eq"),
    tn.NeOp: _compare("ne"),
    tn.LtOp: _compare("lt"),
    tn.LeOp: _compare("le"),
    tn.GtOp: _compare("gt"),
    tn.GeOp: _compare("ge"),
    tn.WhereOp: lambda b, c, x, y: b.select(b.cast(c, i1), x, y),
    tn.FmaxOp: lambda b, x, y: b.binary(arith.MaxnumfOp, arith.MaxSIOp, x, y, arith.OrIOp),
    tn.FminOp: lambda b, x, y: b.binary(arith.MinnumfOp, arith.MinSIOp, x, y, arith.AndIOp),
}
for _tn, _math in {
    tn.ExpOp: math.ExpOp,
    tn.Exp2Op: math.Exp2Op,
    tn.Expm1Op: math.ExpM1Op,
    tn.LogOp: math.LogOp,
    tn.Log2Op: math.Log2Op,
    tn.Log10Op: math.Log10Op,
    tn.Log1pOp: math.Log1pOp,
    tn.SqrtOp: math.SqrtOp,
    tn.RsqrtOp: math.RsqrtOp,
    tn.SinOp: math.SinOp,
    tn.CosOp: math.CosOp,
    tn.TanOp: math.TanOp,
    tn.AsinOp: math.AsinOp,
    tn.AcosOp: math.AcosOp,
    tn.AtanOp: math.AtanOp,
    tn.SinhOp: math.SinhOp,
    tn.CoshOp: math.CoshOp,
    tn.TanhOp: math.TanhOp,
    tn.AsinhOp: math.AsinhOp,
    tn.AcoshOp: math.AcoshOp,
    tn.AtanhOp: math.AtanhOp,
    tn.ErfOp: math.ErfOp,
}.items():
    BODY[_tn] = _float_only(_math)

# No scalar arith/math form: these stay tn ops and run as externs through torch.
EXTERN_REASON = {
    tn.ErfinvOp: "no arith/math scalar form",
    tn.LgammaOp: "no arith/math scalar form",
    tn.DigammaOp: "no arith/math scalar form",
    tn.NextafterOp: "no arith/math scalar form",
    tn.CumsumOp: "scan: runs as an extern",
    tn.CumprodOp: "scan: runs as an extern",
    tn.RandOp: "random: torch's generator",
    tn.RandnOp: "random: torch's generator",
    tn.AtenCallOp: "eager fallback",
    tn.CheckLinalgOp: "linalg's error check: runs as an extern",
}


def elementwise_space(b: NestBuilder, operands, out) -> list[AffineExpr]:
    """The result's extents; a `?` dim takes its size from an operand that has it as `?` too."""
    out_shape = shape(out)
    space = []
    for j, n in enumerate(out_shape):
        if n != DYN:
            space.append(AffineExpr.constant(n))
            continue
        for x in operands:
            i = j - (len(out_shape) - len(shape(x)))
            if i >= 0 and shape(x)[i] == DYN:
                space.append(b.size(x, i))
                break
        else:
            raise Unsupported("a `?` result dim with no `?` operand dim to size it")
    return space


def lower_elementwise(op: Operation) -> list[Operation]:
    out = op.results[0]
    b = NestBuilder()
    b.set_space(elementwise_space(b, op.operands, out))
    dims = b.dims()
    vals = [b.load(x, broadcast_exprs(shape(x), shape(out), dims)) for x in op.operands]
    if isinstance(op, tn.GeluOp):
        r = gelu_body(b, vals[0], op.approximate.data)
    elif isinstance(op, tn.ConvertOp):
        r = b.cast(vals[0], compute_type(out.type.get_element_type()))
        return b.finish([r], [out.type], op_rounding=OP_ROUNDING in op.attributes)
    else:
        r = BODY[type(op)](b, *vals)
    return b.finish([r], [out.type])


for _cls in (*BODY, tn.GeluOp, tn.ConvertOp):
    LOWER[_cls] = lower_elementwise


# -- reductions ----------------------------------------------------------------------------------


def reduction_nest(op) -> tuple[NestBuilder, object]:
    x = op.input
    dims = set(op.dims.get_values())
    b = NestBuilder()
    b.set_space(b.sizes(x), [loop.REDUCTION if d in dims else loop.PARALLEL for d in range(len(shape(x)))])
    return b, b.load(x, b.dims())


def count(b: NestBuilder, like) -> object:
    """The number of points along the reduction dims, as a value of `like`'s type."""
    static, dynamic = 1, None
    for d, kind in enumerate(b.iterators):
        if kind != loop.REDUCTION:
            continue
        e = b.space[d]
        if isinstance(e, AffineConstantExpr):
            static *= e.value
        else:
            v = b.index(e)
            dynamic = v if dynamic is None else b.emit(arith.MuliOp(dynamic, v))
    if dynamic is None:
        return b.like(static, like)
    if static != 1:
        dynamic = b.emit(arith.MuliOp(dynamic, b.index_const(static)))
    return b.cast(dynamic, like.type)


@lowers(tn.SumOp, tn.ProdOp, tn.AmaxOp, tn.AminOp, tn.AnyOp, tn.AllOp, tn.ArgmaxOp, tn.ArgminOp, tn.MeanOp)
def lower_reduction(op) -> list[Operation]:
    b, v = reduction_nest(op)
    if not op.dims.get_values():  # 0-d: the value itself
        kind = {tn.AnyOp: i1, tn.AllOp: i1}.get(type(op))
        return b.finish([b.cast(v, kind) if kind else v], [op.result.type])
    if isinstance(op, tn.AnyOp | tn.AllOp):
        r = b.reduce("any" if isinstance(op, tn.AnyOp) else "all", b.cast(v, i1))
    elif isinstance(op, tn.MeanOp):
        if not is_float(v.type):
            raise Unsupported("mean of integers")
        r = b.div(b.reduce("sum", v), count(b, v))
    else:
        kind = {
            tn.SumOp: "sum",
            tn.ProdOp: "prod",
            tn.AmaxOp: "max",
            tn.AminOp: "min",
            tn.ArgmaxOp: "argmax",
            tn.ArgminOp: "argmin",
        }
        if v.type == i1 and isinstance(op, tn.AmaxOp | tn.AminOp):
            r = b.reduce("any" if isinstance(op, tn.AmaxOp) else "all", v)
        else:
            r = b.reduce(kind[type(op)], v)
    return b.finish([r], [op.result.type])


@lowers(tn.VarOp)
def lower_var(op) -> list[Operation]:
    """Two passes over the rows in one nest: mean, then the sum of squared deviations (numerically sound)."""
    b, x = reduction_nest(op)
    if not is_float(x.type):
        raise Unsupported("variance of integers")
    n = count(b, x)
    mean = b.div(b.reduce("sum", x), n)
    d = b.sub(x, mean)
    denom = b.max(b.sub(n, b.like(op.correction.value.data, x)), b.like(0, x))
    return b.finish([b.div(b.reduce("sum", b.mul(d, d)), denom)], [op.result.type])


# -- creation ------------------------------------------------------------------------------------


@lowers(tn.ConstantOp)
def lower_constant(op) -> list[Operation]:
    values = list(op.value.get_values())
    if len(set(values)) != 1:
        raise Unsupported("a constant with several values")
    b = NestBuilder()
    b.set_space([e for e in shape(op.result)])
    return b.finish([b.const(values[0], compute_type(op.result.type.get_element_type()))], [op.result.type])


@lowers(tn.FromIndexOp)
def lower_from_index(op) -> list[Operation]:
    b = NestBuilder()
    v = b.index(b.sym(op.input))
    return b.finish([b.cast(v, compute_type(op.result.type.get_element_type()))], [op.result.type])


@lowers(tn.IotaOp)
def lower_iota(op) -> list[Operation]:
    b = NestBuilder()
    n = shape(op.result)[0]
    b.set_space([op.sizes[0] if n == DYN else n])
    return b.finish([b.cast(b.index(b.dim(0)), compute_type(op.result.type.get_element_type()))], [op.result.type])


# -- the pass ------------------------------------------------------------------------------------


def lower_op(op: Operation) -> tuple[list[Operation], list[SSAValue]] | None:
    """The loop form of a tn op (new ops, values replacing its results), or None when it stays a tn op."""
    fn = LOWER.get(type(op))
    if fn is None:
        return None
    try:
        out = fn(op)
    except Unsupported:
        return None
    return out if isinstance(out, tuple) else (out, list(out[-1].results))


class LowerTensorOp(RewritePattern):
    """The one rewrite of the pass: dispatch on the op class through LOWER (a rule per tn op, as a table)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (out := lower_op(op)) is not None:
            for new in out[0]:
                if isinstance(new, tn.DimOp) and not new.result.name_hint:
                    new.result.name_hint = "dim"  # else xDSL names it after the replaced op's result
            index_range.remember(op.results, out[1])  # for the gathers that read these values (lower_nn.checked)
            rewriter.replace(op, out[0], out[1])


def extern_reason(op: Operation) -> str | None:
    """Why a tn op has no loop form (None for a non-tn op or one that lowers)."""
    if not op.name.startswith("tn.") or isinstance(op, tn.DimOp):
        return None
    if type(op) in EXTERN_REASON:
        return EXTERN_REASON[type(op)]
    fn = LOWER.get(type(op))
    if fn is None:
        return "extern: torch kernel"
    try:
        fn(op)
    except Unsupported as e:
        return str(e)
    return None


@dataclass(frozen=True)
class TensorToLoopPass(ModulePass):
    """Each tn op that is not an extern or a fallback becomes one loop.nest."""

    name = "tensor-to-loop"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        apply_rules(module, (LowerTensorOp(),))
        index_range.forget(module)


__all__ = ["TensorToLoopPass", "LOWER", "BODY", "lower_op", "extern_reason"]


from . import lower_nn, lower_pool, lower_quant, lower_views, weight_only  # noqa: E402,F401  (their lowerings register into LOWER)
