"""Hypothesis strategies for fuzz programs: `programs()` (inference) and `training_programs()` (backward too).

A program draws 1-3 inputs, then up to `max_ops` ops, each from a weighted family (ops_*.py)
applied to values built so far; an op torch rejects on the real inputs is redrawn (a few tries).
The outputs are the DAG's sinks (op values no later op reads). Everything shrinks toward small:
fewer ops, the first (simplest) family, size 2, float32, contiguous, static shapes.
"""

from hypothesis import assume
from hypothesis import strategies as st

from . import ops_elementwise, ops_nn, ops_reduce, ops_shape
from .builder import ALL_DTYPES, FLOAT_DTYPES, LAYOUTS, Builder
from .programs import Program

FAMILIES = (*ops_elementwise.FAMILIES, *ops_reduce.FAMILIES, *ops_shape.FAMILIES, *ops_nn.FAMILIES)
WEIGHTED = tuple(name for name, _, w in FAMILIES for _ in range(w))
BY_NAME = {name: fn for name, fn, _ in FAMILIES}
TRIES = 4


@st.composite
def programs(
    draw,
    max_ops: int = 5,
    max_inputs: int = 3,
    training: bool = False,
    families: tuple[str, ...] | None = None,
    dtypes: tuple[str, ...] = ALL_DTYPES,
    dynamic: bool = True,
) -> Program:
    b = Builder(draw, training=training, dtypes=FLOAT_DTYPES if training else dtypes, allow_dynamic=dynamic)
    choices = WEIGHTED if families is None else tuple(f for f in WEIGHTED if f in families)
    for _ in range(draw(st.integers(1, max_inputs))):
        b.fresh(b.shape(), layout=draw(st.sampled_from(LAYOUTS)))
    for _ in range(draw(st.integers(1, max_ops))):
        for _ in range(TRIES):
            if b.add(BY_NAME[draw(st.sampled_from(choices))](b)):
                break
    assume(b.ops)
    # Every sink of the DAG (an op value no later op reads) is an output, so no drawn op is dead.
    used = {a for op in b.ops for a in op.args}
    outputs = [i for i, (kind, _) in enumerate(b.order) if kind == "op" and i not in used]
    if training:
        outputs = [o for o in outputs if b.val(o).requires_grad and b.val(o).is_floating_point()]
        assume(outputs)
    return b.program(tuple(outputs))


def training_programs(max_ops: int = 4, **kw) -> st.SearchStrategy[Program]:
    """Programs whose float inputs require grad; the property also compares the inputs' gradients."""
    return programs(max_ops=max_ops, training=True, **kw).filter(_backward_runs)


def _backward_runs(p: Program) -> bool:
    """Eager can differentiate it (some ops have no derivative for some arguments)."""
    from .oracle import gradients
    from .programs import load

    try:
        loaded = load(p)
        gradients(loaded.fn, loaded.make_inputs())
        return True
    except Exception:
        return False
