"""tn.check_index as torch: one min/max pass over the indices (vectorised by torch) and, only when one lies
outside, a second pass finding the first such to name in eager's error. The reference semantics use
`check_index`; the cpu target's extern prepares `index_checker(op)` once and calls it per run."""

from collections.abc import Callable

import torch

from irc.dialects import tensor as tn

ERRORS: dict[str, type[Exception]] = {"IndexError": IndexError, "RuntimeError": RuntimeError}


def index_checker(op: tn.CheckIndexOp) -> Callable:
    """check(index, size=None) -> index, or eager's error; `size` is the bound when the op has no static one."""
    static, wrap = (op.bound.value.data if op.bound is not None else None), op.wrap is not None
    error, message = ERRORS[op.error.data], op.message.data

    def check(index: torch.Tensor, size: int | None = None) -> torch.Tensor:
        n = static if static is not None else int(size)
        low = -n if wrap else 0
        if index.numel():
            least, most = torch.aminmax(index)
            if least.item() < low or most.item() >= n:
                flat = index.reshape(-1)
                first = flat[((flat < low) | (flat >= n)).nonzero()[0, 0]].item()
                raise error(message.format(index=first, size=n))
        return index

    return check


def check_index(op: tn.CheckIndexOp, index: torch.Tensor, size: int | None = None) -> torch.Tensor:
    """The op's meaning: the index tensor itself, or eager's error."""
    return index_checker(op)(index, size)
