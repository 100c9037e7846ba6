"""The op table: xDSL arith/math op class -> Triton expression text over the operands' variable names.

Each entry takes the op and its operands' expressions (already in their compute types, see types.py)
and returns an expression. Helpers named `_x` live in prelude.py. Semantics follow the reference
evaluator (dialects/semantics/scalar.py SCALAR): bool arithmetic is xor/and, casts from bool give 0/1,
`u`-predicates and unsigned ops see the integer's bits as unsigned.
"""

from collections.abc import Callable

from xdsl.dialects import arith, math

from .types import Unsupported, compute_type, is_bool, is_float, literal, rounded, storage_type, unsigned_type

Emit = Callable[..., str]


def _t(op) -> str:
    return compute_type(op.result.type)


def _unsigned(op, x: str, t=None) -> str:
    t = t if t is not None else op.operands[0].type
    u = unsigned_type(t)
    return x if u == "tl.int1" else f"{x}.to({u}, bitcast=True)"


def _back(op, x: str) -> str:
    """An unsigned result as the op's (signless) type again."""
    t = _t(op)
    return x if t == "tl.int1" else f"{x}.to({t}, bitcast=True)"


def _bool_or(int_op: str, bool_op: str) -> Emit:
    return lambda op, a, b: f"({a} {bool_op} {b})" if is_bool(op.result.type) else f"({a} {int_op} {b})"


def _cmpf(op, a, b) -> str:
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    nan = f"(({a} != {a}) | ({b} != {b}))"
    rel = {"eq": "==", "gt": ">", "ge": ">=", "lt": "<", "le": "<=", "ne": "!="}
    if pred == "false":
        return f"(({a} != {a}) & ({a} == {a}))"
    if pred == "true":
        return f"(({a} != {a}) | ({a} == {a}))"
    if pred == "ord":
        return f"(~{nan})"
    if pred == "uno":
        return nan
    r = f"({a} {rel[pred[1:]]} {b})"
    if pred[0] == "o":
        return f"({r} & ~{nan})" if pred == "one" else r
    return r if pred == "une" else f"({r} | {nan})"


def _cmpi(op, a, b) -> str:
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    rel = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
    if pred[0] == "u" and not is_bool(op.operands[0].type):
        a, b = _unsigned(op, a), _unsigned(op, b)
    return f"({a} {rel[pred[1:] if pred[0] in 'su' else pred]} {b})"


def _cast(op, x) -> str:
    src, dst = op.operands[0].type, op.result.type
    if compute_type(src) == compute_type(dst):
        return x
    return f"{x}.to({compute_type(dst)})"


def _truncf(op, x) -> str:
    """Round to the narrower float, then hold it in its compute type again."""
    s, c = storage_type(op.result.type), compute_type(op.result.type)
    return f"{x}.to({s})" if s == c else rounded(x, s, c)


def _trunci(op, x) -> str:
    if is_bool(op.result.type):
        return f"(({x} & 1) != 0)"
    return f"{x}.to({_t(op)})"


def _ext_unsigned(op, x) -> str:
    return f"{_unsigned(op, x)}.to({_t(op)})"


def _bitcast(op, x) -> str:
    src, dst = op.operands[0].type, op.result.type
    if is_float(src):
        x = f"{x}.to({storage_type(src)})"
    y = f"{x}.to({storage_type(dst)}, bitcast=True)"
    return f"{y}.to({compute_type(dst)})" if storage_type(dst) != compute_type(dst) else y


def _constant(op) -> str:
    v = op.value
    value = v.value.data if hasattr(v, "value") else v.get_values()[0]
    return literal(value, op.result.type)


def _fn(name: str) -> Emit:
    return lambda op, *xs: f"{name}({', '.join(xs)})"


def _float_only(name: str) -> Emit:
    def emit(op, *xs):
        if not is_float(op.result.type):
            raise Unsupported(f"{op.name} on {op.result.type}")
        return f"{name}({', '.join(xs)})"

    return emit


def _unsigned_binary(sym: str) -> Emit:
    return lambda op, a, b: _back(op, f"({_unsigned(op, a)} {sym} {_unsigned(op, b)})")


def _unsigned_fn(name: str) -> Emit:
    return lambda op, a, b: _back(op, f"{name}({_unsigned(op, a)}, {_unsigned(op, b)})")


def _fpowi(op, a, b) -> str:
    return f"_powf({a}, {b}.to({_t(op)}))"


OPS: dict[type, Emit] = {
    arith.ConstantOp: _constant,
    arith.AddfOp: lambda op, a, b: f"({a} + {b})",
    arith.SubfOp: lambda op, a, b: f"({a} - {b})",
    arith.MulfOp: lambda op, a, b: f"({a} * {b})",
    arith.DivfOp: lambda op, a, b: f"({a} / {b})",
    arith.NegfOp: lambda op, a: f"(-{a})",
    arith.MaximumfOp: _fn("_maximumf"),
    arith.MinimumfOp: _fn("_minimumf"),
    arith.MaxnumfOp: _fn("_maxnumf"),
    arith.MinnumfOp: _fn("_minnumf"),
    arith.AddiOp: _bool_or("+", "^"),
    arith.SubiOp: _bool_or("-", "^"),
    arith.MuliOp: _bool_or("*", "&"),
    arith.DivSIOp: _fn("_divsi"),
    arith.FloorDivSIOp: _fn("_floordivsi"),
    arith.RemSIOp: _fn("_remsi"),
    arith.CeilDivSIOp: lambda op, a, b: f"(-_floordivsi(-{a}, {b}))",
    arith.DivUIOp: _unsigned_binary("//"),
    arith.RemUIOp: _unsigned_binary("%"),
    arith.MaxSIOp: _fn("tl.maximum"),
    arith.MinSIOp: _fn("tl.minimum"),
    arith.MaxUIOp: _unsigned_fn("tl.maximum"),
    arith.MinUIOp: _unsigned_fn("tl.minimum"),
    arith.AndIOp: lambda op, a, b: f"({a} & {b})",
    arith.OrIOp: lambda op, a, b: f"({a} | {b})",
    arith.XOrIOp: lambda op, a, b: f"({a} ^ {b})",
    arith.ShLIOp: lambda op, a, b: f"({a} << {b})",
    arith.ShRSIOp: lambda op, a, b: f"({a} >> {b})",
    arith.ShRUIOp: _unsigned_binary(">>"),
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: lambda op, c, a, b: f"tl.where({c}, {a}, {b})",
    arith.SIToFPOp: _cast,
    arith.FPToSIOp: _cast,
    arith.FPToUIOp: _cast,
    arith.ExtFOp: _cast,
    arith.ExtSIOp: _cast,
    arith.IndexCastOp: _cast,
    arith.TruncFOp: _truncf,
    arith.TruncIOp: _trunci,
    arith.UIToFPOp: _ext_unsigned,
    arith.ExtUIOp: _ext_unsigned,
    arith.BitcastOp: _bitcast,
    math.AbsFOp: _fn("tl.abs"),
    math.AbsIOp: _fn("tl.abs"),
    math.ExpOp: _float_only("tl.exp"),
    math.Exp2Op: _float_only("tl.exp2"),
    math.ExpM1Op: _float_only("_expm1"),
    math.LogOp: _float_only("tl.log"),
    math.Log2Op: _float_only("tl.log2"),
    math.Log10Op: lambda op, x: f"(tl.log({x}) * 0.4342944819032518)",
    math.Log1pOp: _float_only("_log1p"),
    math.SqrtOp: _float_only("tl.sqrt"),
    math.RsqrtOp: lambda op, x: f"(1.0 / tl.sqrt({x}))",
    math.CbrtOp: _float_only("_cbrt"),
    math.SinOp: _float_only("tl.sin"),
    math.CosOp: _float_only("tl.cos"),
    math.TanOp: lambda op, x: f"(tl.sin({x}) / tl.cos({x}))",
    math.SinhOp: _float_only("_sinh"),
    math.CoshOp: _float_only("_cosh"),
    math.TanhOp: _float_only("_tanh"),
    math.AtanOp: _float_only("_atan"),
    math.Atan2Op: _float_only("_atan2"),
    math.AsinOp: _float_only("_asin"),
    math.AcosOp: _float_only("_acos"),
    math.AsinhOp: _float_only("_asinh"),
    math.AcoshOp: _float_only("_acosh"),
    math.AtanhOp: _float_only("_atanh"),
    math.ErfOp: _float_only("tl.erf"),
    math.FloorOp: _float_only("tl.floor"),
    math.CeilOp: _float_only("tl.ceil"),
    math.RoundOp: _float_only("_round"),
    math.RoundEvenOp: _float_only("_roundeven"),
    math.TruncOp: _float_only("_trunc"),
    math.PowFOp: _float_only("_powf"),
    math.FPowIOp: _fpowi,
    math.IPowIOp: _fn("_ipowi"),
    math.CopySignOp: _float_only("_copysign"),
    math.FmaOp: lambda op, a, b, c: f"({a} * {b} + {c})",
}


def emit_op(op, args: list[str]) -> str:
    fn = OPS.get(type(op))
    if fn is None:
        raise Unsupported(f"no Triton emitter for {op.name}")
    return fn(op, *args)
