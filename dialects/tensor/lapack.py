"""tn.linalg: torch's dense linear algebra (LAPACK's factorizations, solves and decompositions, and matrix_exp) as
one typed op. Its `fn` names a function of a closed table (FUNCTIONS): each entry gives the aten overload the op
runs, the element type and least rank of each operand, the element type of each result and a shape function
the verifier checks the result types against. The op means its overload called on its operands
(dialects/semantics): results equal eager's exactly, as the sorts do, because they are eager's kernels.

`options` holds the overload's non-tensor arguments that differ from aten's defaults, by their schema names
(bools and strings); an optional tensor argument that is given is named there with a unit value and passed as
the next operand. `column_major` lists the operands eager passes in another layout than row-major: some kernels
choose their algorithm by layout (det factors A^T when A is row-major; solve_triangular solves the transposed
system), so the op hands each operand over in the layout eager had.
    %l, %info = tn.linalg "cholesky_ex"(%a) {upper = true} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch._ops import OpOverload
from xdsl.dialects.builtin import (
    ComplexType,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.ir.types import is_float

from .base import DYN, broadcast_shapes, check_shape, element, shape

aten = torch.ops.aten
Shape = tuple[int, ...]
NAME = "tn.linalg"


# -- shape rules: sizes where `?` matches anything -----------------------------------------------------------------


def _meet(what: str, a: int, b: int) -> int:
    """Two sizes that must agree: the static one wins over `?`."""
    if DYN not in (a, b) and a != b:
        raise VerifyException(f"{NAME}: {what} sizes {a} and {b} differ")
    return b if a == DYN else a


def _least(a: int, b: int) -> int:
    return DYN if DYN in (a, b) else min(a, b)


def _square(a: Shape) -> Shape:
    n = _meet("square matrix", a[-2], a[-1])
    return (*a[:-2], n, n)


def _batch(*shapes: Shape) -> Shape:
    return broadcast_shapes(NAME, *shapes)


def _solved(a: Shape, b: Shape, left: bool) -> Shape:
    """B's shape after solving A X = B (X A = B unless left), the batch dims broadcast."""
    _meet("solve", b[-2] if left else b[-1], a[-1])
    return (*_batch(b[:-2], a[:-2]), *b[-2:])


def _pivots_of(a: Shape, pivots: Shape) -> None:
    check_shape(NAME, "pivots", pivots, a[:-1])


def _solve(a, b, left=True, **_):
    a = _square(a)
    vector = len(b) == 1 or (len(b) == len(a) - 1 and all(x == y or DYN in (x, y) for x, y in zip(b, a[:-1])))
    if vector and not left:
        raise VerifyException(f"{NAME}: a vector right-hand side needs left = true")
    x = _solved(a, (*b, 1) if vector else b, left)
    return [x[:-1] if vector else x, a, a[:-1], a[:-2]]


def _svd(a, full_matrices=False, compute_uv=True, **_):
    *batch, m, n = a
    k = _least(m, n)
    if not compute_uv:
        return [(0,), (*batch, k), (0,)]
    return [(*batch, m, m if full_matrices else k), (*batch, k), (*batch, n if full_matrices else k, n)]


def _qr(a, mode="reduced", **_):
    *batch, m, n = a
    rows = _least(m, n) if mode != "complete" else m
    return [(*batch, m, rows) if mode != "r" else (0,), (*batch, rows, n)]


def _lu(a, pivot=True, **_):
    *batch, m, n = a
    k = _least(m, n)
    return [(*batch, m, m) if pivot else (0,), (*batch, m, k), (*batch, k, n)]


def _lu_unpack(lu, pivots, unpack_data=True, unpack_pivots=True, **_):
    p, l, u = _lu(lu)
    return [p if unpack_pivots else (0,), l if unpack_data else (0,), u if unpack_data else (0,)]


def _lu_solve(lu, pivots, b, left=True, **_):
    lu = _square(lu)
    _pivots_of(lu, pivots)
    return [_solved(lu, b, left)]


def _householder(a, tau, **_):
    if len(tau) != len(a) - 1:
        raise VerifyException(f"{NAME}: tau must have one dim less than the matrix")
    check_shape(NAME, "tau batch", tau[:-1], a[:-2])
    return [a]


def _ormqr(a, tau, other, left=True, **_):
    _householder(a, tau)
    _meet("reflector", other[-2] if left else other[-1], a[-2])
    return [other]


def _pinv(a, atol=None, rtol=None, **_):
    return [(*_batch(a[:-2], atol or (), rtol or ()), a[-1], a[-2])]


def _triangular_solve(b, a, **_):
    a = _square(a)
    x = _solved(a, b, True)
    return [x, (*x[:-2], *a[-2:])]


def _ldl_solve(ld, pivots, b, **_):
    ld = _square(ld)
    _pivots_of(ld, pivots)
    return [_solved(ld, b, True)]


# -- the table ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    """One function of tn.linalg. `operands`: per tensor argument of the overload's schema, its element rule and
    least rank ("F2": a float matrix of the op's element type, "i1": i32 pivots, "R0": a float tolerance of any
    type); `results`: per result, "F" (the first operand's element type), "i" (i32) or "C" (complex of F);
    `shapes(*operand shapes, **options)`: the result shapes (None for an absent optional operand)."""

    overload: OpOverload
    operands: tuple[str, ...]
    results: str
    shapes: Callable[..., list[Shape]]
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def schema(self):
        return self.overload._schema

    def tensor_args(self):
        return [a for a in self.schema.arguments if "Tensor" in str(a.type)]

    def option_args(self):
        return [a for a in self.schema.arguments if "Tensor" not in str(a.type)]


def _same(a, **_):
    return [_square(a)]


def _factor(a, **_):  # a factor of A's shape, pivots, info
    a = _square(a)
    return [a, a[:-1], a[:-2]]


FUNCTIONS: dict[str, Function] = {
    "cholesky_ex": Function(aten.linalg_cholesky_ex.default, ("F2",), "Fi", lambda a, **_: [_square(a), a[:-2]]),
    "inv_ex": Function(aten.linalg_inv_ex.default, ("F2",), "Fi", lambda a, **_: [_square(a), a[:-2]]),
    "solve_ex": Function(aten._linalg_solve_ex.default, ("F2", "F1"), "FFii", _solve),
    "det": Function(aten._linalg_det.default, ("F2",), "FFi", lambda a, **_: [a[:-2], _square(a), a[:-1]]),
    "slogdet": Function(
        aten._linalg_slogdet.default, ("F2",), "FFFi", lambda a, **_: [a[:-2], a[:-2], _square(a), a[:-1]]
    ),
    "eigh": Function(
        aten._linalg_eigh.default,
        ("F2",),
        "FF",
        lambda a, compute_v=True, **_: [a[:-1], _square(a) if compute_v else (0,)],
        {"UPLO": ("L", "U")},
    ),
    "eig": Function(aten.linalg_eig.default, ("F2",), "CC", lambda a, **_: [a[:-1], _square(a)]),
    "svd": Function(aten._linalg_svd.default, ("F2",), "FFF", _svd),
    "qr": Function(aten.linalg_qr.default, ("F2",), "FF", _qr, {"mode": ("reduced", "complete", "r")}),
    "lu": Function(aten.linalg_lu.default, ("F2",), "FFF", _lu),
    "lu_factor_ex": Function(
        aten.linalg_lu_factor_ex.default, ("F2",), "Fii", lambda a, **_: [a, (*a[:-2], _least(a[-2], a[-1])), a[:-2]]
    ),
    "lu_solve": Function(aten.linalg_lu_solve.default, ("F2", "i1", "F2"), "F", _lu_solve),
    "lu_unpack": Function(aten.lu_unpack.default, ("F2", "i1"), "FFF", _lu_unpack),
    "solve_triangular": Function(
        aten.linalg_solve_triangular.default,
        ("F2", "F2"),
        "F",
        lambda a, b, left=True, **_: [_solved(_square(a), b, left)],
    ),
    "triangular_solve": Function(aten.triangular_solve.default, ("F2", "F2"), "FF", _triangular_solve),
    "householder_product": Function(aten.linalg_householder_product.default, ("F2", "F1"), "F", _householder),
    "ldl_factor_ex": Function(aten.linalg_ldl_factor_ex.default, ("F2",), "Fii", _factor),
    "ldl_solve": Function(aten.linalg_ldl_solve.default, ("F2", "i1", "F2"), "F", _ldl_solve),
    "geqrf": Function(aten.geqrf.default, ("F2",), "FF", lambda a, **_: [a, (*a[:-2], _least(a[-2], a[-1]))]),
    "ormqr": Function(aten.ormqr.default, ("F2", "F1", "F2"), "F", _ormqr),
    "cholesky": Function(aten.cholesky.default, ("F2",), "F", _same),
    "cholesky_inverse": Function(aten.cholesky_inverse.default, ("F2",), "F", _same),
    "cholesky_solve": Function(
        aten.cholesky_solve.default, ("F2", "F2"), "F", lambda b, a, **_: [_solved(_square(a), b, True)]
    ),
    "matrix_exp": Function(aten.linalg_matrix_exp.default, ("F2",), "F", _same),
    "pinv": Function(aten.linalg_pinv.atol_rtol_tensor, ("F2", "R0", "R0"), "F", _pinv),
}
"""fn name -> its function: every overload irc runs as tn.linalg."""

BY_OVERLOAD: dict[OpOverload, str] = {f.overload: name for name, f in FUNCTIONS.items()}


# -- options: aten's non-tensor arguments as attributes --------------------------------------------------------------


def option_attr(value) -> Attribute:
    if isinstance(value, bool):
        return IntegerAttr.from_bool(value)
    if isinstance(value, str):
        return StringAttr(value)
    raise TypeError(f"{NAME} has no attribute for option value {value!r}")


def option_values(fn: Function, options: DictionaryAttr) -> dict:
    """Every non-tensor option of `fn` as a Python value, aten's default where `options` leaves it out."""
    values = {a.name: a.default_value for a in fn.option_args() if a.has_default_value()}
    for k, v in options.data.items():
        if not isinstance(v, UnitAttr):
            values[k] = v.data if isinstance(v, StringAttr) else bool(v.value.data)
    return values


def _check_options(name: str, fn: Function, options: DictionaryAttr) -> None:
    kinds = {a.name: str(a.type) for a in fn.schema.arguments}
    for k, v in options.data.items():
        kind = kinds.get(k)
        if kind is None:
            raise VerifyException(f"{NAME} {name}: no option {k!r}")
        want = UnitAttr if kind.startswith("Optional[Tensor") else StringAttr if "str" in kind else IntegerAttr
        if not isinstance(v, want) or (want is IntegerAttr and v.type != i1):
            raise VerifyException(f"{NAME}: option {k} must be {'given as a unit' if want is UnitAttr else kind}")
        if k in fn.choices and v.data not in fn.choices[k]:
            raise VerifyException(f"{NAME}: option {k} must be one of {list(fn.choices[k])}, got {v.data!r}")
    if missing := [a.name for a in fn.option_args() if not a.has_default_value() and a.name not in options.data]:
        raise VerifyException(f"{NAME}: option {missing[0]} has no default and must be given")
    if option_values(fn, options).get("check_errors"):
        raise VerifyException(f"{NAME}: check_errors raises from inside a pure op; the check is its own call")


def _element_rule(rule: str, first: Attribute, what: str, el: Attribute) -> None:
    ok = {"F": el == first, "i": el == i32, "R": is_float(el), "C": el == ComplexType(first)}[rule]
    if not ok:
        want = {"F": str(first), "i": "i32", "R": "a float type", "C": str(ComplexType(first))}[rule]
        raise VerifyException(f"{NAME}: {what} must have {want} elements, got {el}")


@irdl_op_definition
class LinalgOp(IRDLOperation):
    """A dense linear algebra function of FUNCTIONS, run as torch's kernel; here det of a column-major matrix:
    %d, %lu, %p = tn.linalg "det"(%a) {} column_major [0] : (tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3xi32>)"""

    name = NAME
    fn = prop_def(StringAttr)
    options = prop_def(DictionaryAttr)
    column_major = opt_prop_def(DenseArrayBase.constr(i64))
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$fn `(` $inputs `)` $options (`column_major` $column_major^)? attr-dict `:` "
        "`(` type($inputs) `)` `->` `(` type($outputs) `)`"
    )

    def __init__(
        self,
        fn: str,
        options: dict[str, Attribute],
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        column_major: Sequence[int] = (),
    ):
        props: dict[str, Attribute] = {"fn": StringAttr(fn), "options": DictionaryAttr(options)}
        if column_major:
            props["column_major"] = DenseArrayBase.from_list(i64, list(column_major))
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], properties=props)

    @property
    def function(self) -> Function:
        return FUNCTIONS[self.fn.data]

    def operand_names(self) -> list[str]:
        """The schema names of the tensor arguments the operands stand for, in order."""
        args = self.function.tensor_args()
        return [a.name for a in args if not str(a.type).startswith("Optional") or a.name in self.options.data]

    def column_major_operands(self) -> set[int]:
        return set(self.column_major.get_values()) if self.column_major is not None else set()

    def verify_(self):
        if self.fn.data not in FUNCTIONS:
            raise VerifyException(f"{NAME}: unknown function {self.fn.data!r}")
        fn = self.function
        _check_options(self.fn.data, fn, self.options)
        given = self.operand_names()
        if len(self.inputs) != len(given):
            raise VerifyException(f"{NAME} {self.fn.data}: takes {len(given)} operands, got {len(self.inputs)}")
        if len(self.outputs) != len(fn.results):
            raise VerifyException(f"{NAME} {self.fn.data}: gives {len(fn.results)} results, got {len(self.outputs)}")
        if bad := [
            i for i in self.column_major_operands() if not 0 <= i < len(self.inputs) or len(shape(self.inputs[i])) < 2
        ]:
            raise VerifyException(f"{NAME}: column_major names operands {bad} that are no matrices")
        first = element(self.inputs[0])
        if first not in (f32, f64):
            raise VerifyException(f"{NAME}: needs f32 or f64 matrices, got {first}")
        rules = dict(zip([a.name for a in fn.tensor_args()], fn.operands))
        for name, v in zip(given, self.inputs):
            _element_rule(rules[name][0], first, f"operand {name}", element(v))
            if len(shape(v)) < int(rules[name][1:]):
                raise VerifyException(
                    f"{NAME}: operand {name} must have rank >= {rules[name][1:]}, got {len(shape(v))}"
                )
        shapes = dict(zip(given, [shape(v) for v in self.inputs]))
        want = fn.shapes(*[shapes.get(a.name) for a in fn.tensor_args()], **option_values(fn, self.options))
        for i, (rule, r, expected) in enumerate(zip(fn.results, self.outputs, want)):
            _element_rule(rule, first, f"result {i}", element(r))
            check_shape(NAME, f"result {i}", shape(r), expected)


__all__ = ["LinalgOp"]
