"""tn linear algebra: matrix products (2-d and batched). addmm/baddbmm are imported as these plus mul/add; tn.addmm
is made later, by fold-bias, for a target whose library adds a bias (and a gelu after it) in the product's own
pass."""

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import DYN, check_shape, element, shape


def _meet(name: str, what: str, a: int, b: int) -> int:
    """Two sizes that must agree: the static one wins over `?`."""
    if DYN not in (a, b) and a != b:
        raise VerifyException(f"{name}: {what} sizes {a} and {b} differ")
    return b if a == DYN else a


class Contraction(IRDLOperation):
    """lhs[..., m, k] @ rhs[..., k, n] -> [..., m, n] over operands of one element type and rank RANK."""

    RANK: ClassVar[int]
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute | None = None):
        if result_type is None:
            result_type = TensorType(element(lhs), self.expected_shape(shape(lhs), shape(rhs)))
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def expected_shape(cls, a: tuple[int, ...], b: tuple[int, ...]) -> list[int]:
        name = cls.name
        if len(a) != cls.RANK or len(b) != cls.RANK:
            raise VerifyException(f"{name}: operands must have rank {cls.RANK}, got {len(a)} and {len(b)}")
        batch = [_meet(name, "batch", x, y) for x, y in zip(a[:-2], b[:-2])]
        _meet(name, "contraction", a[-1], b[-2])
        return [*batch, a[-2], b[-1]]

    def verify_(self):
        if not element(self.lhs) == element(self.rhs) == element(self.result):
            raise VerifyException(f"{self.name}: operands and result must share one element type")
        check_shape(self.name, "result", shape(self.result), self.expected_shape(shape(self.lhs), shape(self.rhs)))


@irdl_op_definition
class MmOp(Contraction):
    """Matrix product.   %r = tn.mm %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>"""

    name = "tn.mm"
    RANK: ClassVar[int] = 2


@irdl_op_definition
class BmmOp(Contraction):
    """Batched matrix product.   %r = tn.bmm %a, %b : tensor<?x4x8xf32>, tensor<?x8x16xf32> -> tensor<?x4x16xf32>"""

    name = "tn.bmm"
    RANK: ClassVar[int] = 3


@irdl_op_definition
class AddmmOp(IRDLOperation):
    """A matrix product plus a bias per column, then optionally an `epilogue` (gelu: exact; gelu_tanh: tanh-
    approximated), in one library call (the target applies both in the product's own pass); fold-bias makes it from
    tn.mm and the nest that adds its bias (and applies the gelu) where the target asks.
    %r = tn.addmm %a, %b bias %c : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    %g = tn.addmm %a, %b bias %c epilogue "gelu" : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>"""

    EPILOGUES: ClassVar[tuple[str, ...]] = ("gelu", "gelu_tanh")
    name = "tn.addmm"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    bias = operand_def(TensorType)
    epilogue = opt_prop_def(StringAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `bias` $bias (`epilogue` $epilogue^)? attr-dict `:` type($lhs) `,` type($rhs) `,` "
        "type($bias) `->` type($result)"
    )

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, bias: SSAValue, result_type: Attribute, epilogue: str | None = None
    ):
        props = {"epilogue": StringAttr(epilogue)} if epilogue is not None else {}
        super().__init__(operands=[lhs, rhs, bias], result_types=[result_type], properties=props)

    @property
    def epilogue_name(self) -> str | None:
        """The epilogue after the bias (None: the bias only)."""
        return self.epilogue.data if self.epilogue is not None else None

    def verify_(self):
        if not element(self.lhs) == element(self.rhs) == element(self.bias) == element(self.result):
            raise VerifyException(f"{self.name}: operands and result must share one element type")
        a, b = shape(self.lhs), shape(self.rhs)
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"{self.name}: operands must have rank 2, got {len(a)} and {len(b)}")
        _meet(self.name, "contraction", a[1], b[0])
        check_shape(self.name, "result", shape(self.result), [a[0], b[1]])
        check_shape(self.name, "bias", shape(self.bias), [b[1]])
        if self.epilogue_name not in (None, *self.EPILOGUES):
            raise VerifyException(
                f"{self.name}: epilogue must be one of {', '.join(self.EPILOGUES)}, got {self.epilogue_name!r}"
            )
