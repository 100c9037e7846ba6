"""tn.check_linalg: linalg's error check, the op after a factorization that raises torch.linalg.LinAlgError when its
`info` is not all zeros (a singular matrix, one not positive-definite). AOT autograd orders it with an effect token;
irc keeps that order by the op's effects: it is not Pure, so it is never dead code and never moves past another op
with effects (the token itself passes through the graph unchanged). It means aten._linalg_check_errors
(dialects/semantics), so the error and its message are eager's."""

from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr, i32
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from .base import element, shape


@irdl_op_definition
class CheckLinalgOp(IRDLOperation):
    """Linalg's check.   tn.check_linalg %info api = "linalg.inv" matrix : tensor<i32>

    Nothing when every element of `info` is 0, else eager's error (mostly a LinAlgError) naming `api` (and, without
    `matrix`, the first failing batch element); `matrix`: `info` is one matrix's, a single element. No results."""

    name = "tn.check_linalg"
    info = operand_def(TensorType)
    api = prop_def(StringAttr)
    matrix = opt_prop_def(UnitAttr)
    # No traits: an op with unknown effects (it may raise), which xDSL never erases or reorders as side-effect free.
    assembly_format = "$info `api` `=` $api (`matrix` $matrix^)? attr-dict `:` type($info)"

    def __init__(self, info, api: str, matrix: bool):
        props = {"api": StringAttr(api), **({"matrix": UnitAttr()} if matrix else {})}
        super().__init__(operands=[info], properties=props)

    def verify_(self):
        if element(self.info) != i32:
            raise VerifyException(f"{self.name}: info must be a tensor of i32, not {self.info.type}")
        if self.matrix is not None and any(n != 1 for n in shape(self.info)):
            # aten reads one matrix's info as a scalar (item()); a `?` size may hold more
            raise VerifyException(f"{self.name}: `matrix` needs a one-element info, not {self.info.type}")
