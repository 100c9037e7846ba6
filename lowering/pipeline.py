"""The whole compiler on one screen: the named stages and the passes between them."""

from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

# stage name -> passes that produce it from the previous stage (`fx` and `tensor` come from the frontend)
TENSOR_OPT = (CommonSubexpressionElimination(), DeadCodeElimination())

STAGES = {"tensor-opt": TENSOR_OPT}
STAGE_ORDER = ("fx", "tensor", "tensor-opt")
