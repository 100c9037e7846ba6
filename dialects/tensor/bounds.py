"""tn.check_index: the bounds check lowering puts before every load through an index tensor (a loop.load reads an
unspecified value outside its source, so without it a gather would read silently where eager raises)."""

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .indexing import require_index

INDEX_ERRORS = ("IndexError", "RuntimeError")


@irdl_op_definition
class CheckIndexOp(IRDLOperation):
    """`index` unchanged when every element lies in [0, n) (in [-n, n) with `wrap`), n the static `bound` or the index
    value `size`; else eager's error: the exception `error` with `message`, its {index} the first element outside
    (row-major) and {size} n.
    %j = tn.check_index %i bound = 10 wrap error = "IndexError" message = "index {index} is out of bounds for dimension 0 with size {size}" : tensor<2xi64>"""

    name = "tn.check_index"
    T: ClassVar = VarConstraint("T", base(TensorType))
    index = operand_def(T)
    size = opt_operand_def(IndexType)
    bound = opt_prop_def(IntegerAttr[i64])
    wrap = opt_prop_def(UnitAttr)
    error = prop_def(StringAttr)
    message = prop_def(StringAttr)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$index (`size` $size^)? (`bound` `=` $bound^)? (`wrap` $wrap^)? `error` `=` $error `message` `=` $message attr-dict "
        "`:` type($index)"
    )

    def __init__(self, index: SSAValue, bound: int | SSAValue, wrap: bool, error: str, message: str):
        dynamic = isinstance(bound, SSAValue)
        props: dict[str, Attribute] = {"error": StringAttr(error), "message": StringAttr(message)}
        if not dynamic:
            props["bound"] = IntegerAttr(bound, i64)
        if wrap:
            props["wrap"] = UnitAttr()
        super().__init__(operands=[index, [bound] if dynamic else []], result_types=[index.type], properties=props)

    def verify_(self):
        require_index(self.name, self.index)
        if (self.bound is None) == (self.size is None):
            raise VerifyException(f"{self.name}: needs a static `bound` or a `size` operand, not both")
        if self.error.data not in INDEX_ERRORS:
            raise VerifyException(f"{self.name}: error must be one of {', '.join(INDEX_ERRORS)}")
