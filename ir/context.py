"""One xDSL Context holding the builtin, func, arith and math dialects plus any project dialects."""

from collections.abc import Iterable

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, math
from xdsl.ir import Dialect

BASE_DIALECTS: tuple[Dialect, ...] = (builtin.Builtin, func.Func, arith.Arith, math.Math)


def make_context(dialects: Iterable[Dialect] = ()) -> Context:
    ctx = Context()
    for d in (*BASE_DIALECTS, *dialects):
        ctx.load_dialect(d)
    return ctx
