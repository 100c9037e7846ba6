"""What every op means, as torch: one table below lowering, keyed by op class.

`SEMANTICS[tn op class](op, *operand values)` gives a tn op's result (a tuple for several), and
`SCALAR[arith/math op class](op, *operand tensors)` a loop-body scalar op's. The reference target runs
them (targets/reference), fold-constants evaluates with them, the cpu target's bounds-check extern
calls `bounds.index_checker`, and the other targets are tested against them.
"""

from .nn import NN_SEMANTICS
from .quant import QUANT_SEMANTICS
from .scalar import SCALAR, scalar_dtype
from .tensor import TENSOR_SEMANTICS

SEMANTICS = {**TENSOR_SEMANTICS, **NN_SEMANTICS, **QUANT_SEMANTICS}

__all__ = ["SCALAR", "SEMANTICS", "scalar_dtype"]
