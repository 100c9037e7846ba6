"""The shape of a launch's work on the CPU: the block of the space one item covers (a Tile) and the vector
width, as the emitter picks them by default (max-autotune measures others: autotune.py). The sizes named here are
tuning.py's.

When the innermost dim of a nest is parallel, an item is `rows` points of one outer dim by `cols`
elements of the innermost one, run row by row, so what the rows share stays in cache. Defaults:

    a pointwise nest reading some buffer across its lines   TRANSPOSE_TILE (16 x 64), blocking the outer dim
      (a static stride other than 0 or 1 along the          along which that read is contiguous
      innermost dim: a transposed copy)
    a nest reducing in vector lanes (a column sum)           REDUCTION_COLS columns per item (fewer, down to
                                                             MIN_REDUCTION_COLS, so that a narrow one still has
                                                             REDUCTION_ITEMS items), so the items spread over the
                                                             threads; and up to LANES_REDUCING native vectors per
                                                             step (default_lanes)
    anything else                                            one row, CHUNK columns

A nest whose whole reduction is its innermost dim (a row sum, layer_norm, softmax) also takes up to
LANES_REDUCING native vectors per step, where its row holds two of them: independent accumulators, so the sums do not
wait on one add chain."""

from __future__ import annotations

from typing import NamedTuple

from xdsl.ir.affine import AffineConstantExpr

from irc.dialects import loop

from . import tuning
from .affine import coefficient, lane_coefficient


class Tile(NamedTuple):
    """The block one item covers when the innermost dim is parallel: `rows` points of an outer dim by `cols`
    elements of the innermost dim."""

    rows: int = 1
    cols: int = tuning.CHUNK


DEFAULT_TILE = Tile()  # "the emitter's choice": the defaults above


def reduction_cols(n: int | None) -> int:
    """Columns per item of a nest reducing in vector lanes, `n` columns wide (None: known at run time). Each column's
    sum runs down the rows in its own lane, so the split changes no result; narrower items give a narrow sum's
    threads something to share."""
    cols = tuning.REDUCTION_COLS
    while n is not None and cols > tuning.MIN_REDUCTION_COLS and -(-n // cols) < tuning.REDUCTION_ITEMS:
        cols //= 2
    return cols


def default_lanes(nest: loop.NestOp, native: int) -> int:
    """The vector width of a launch unless max-autotune chose one: the host's `native`, or, for a nest that
    reduces, up to LANES_REDUCING times it: LLVM splits the wide vector into that many registers, independent
    accumulators whose loads from one row are contiguous. No wider than the static innermost extent needs
    when that dim is parallel (a column sum, a generated matmul); when it is the whole reduction (a row of
    layer_norm, softmax, a row sum), only while the row holds two of the wider vectors. A nest that also
    reduces outer dims (BatchNorm's statistics over N, H, W) keeps the native width: summed wider, its rounding
    can move a value just above zero to zero where eager's does not, and a ReLU after it then masks what eager
    keeps (docs/cpu-target.md, Vectorisation)."""
    ext = [e.value if isinstance(e, AffineConstantExpr) else None for e in nest.extents]
    live = [d for d in range(nest.rank) if ext[d] != 1]
    reducing = [d for d in nest.reduction_dims() if ext[d] != 1]
    if not live or not reducing or (live[-1] in reducing and reducing != [live[-1]]):
        return native
    n, k = ext[live[-1]], 1
    # a row reduction's wide vector must fit its row: its masked last vector costs a whole one
    room = (lambda k: 2 * k * native <= n) if live[-1] in reducing else (lambda k: k * native < n)
    while k < tuning.LANES_REDUCING and (n is None or room(k)) and _whole(nest, live[-1], native * k * 2, native):
        k *= 2  # powers of two: the widths max-autotune measures
    return native * k


def _whole(nest: loop.NestOp, v: int, lanes: int, native: int) -> bool:
    """Do the loads that read whole vectors at the native width still read whole vectors `lanes` wide? Views that
    split the vector dim (heads of 32 columns) do only up to the split's size; past it they would be gathers."""
    loads = [op for op in nest.body.block.ops if isinstance(op, loop.LoadOp) and not op.indices]
    exprs = [e for op in loads for e in op.map.data.results]
    return all(lane_coefficient(e, v, lanes) is not None for e in exprs if lane_coefficient(e, v, native) is not None)


def steps_along(k, op: loop.LoadOp, d: int) -> int | None:
    """How many elements a load of the nest `k` (a Space) moves per step of dim d (None: known only at run time, or
    not affine)."""
    spec = k.params[k.args.index(op.source)]
    coefs = [coefficient(e, d) for e in op.map.data.results]
    if op.indices or None in coefs or not all(st.static for c, st in zip(coefs, spec.strides) if c):
        return None
    return sum(c * st.const for c, st in zip(coefs, spec.strides) if c)


def strided_loads(k) -> list[loop.LoadOp]:
    """Loads that move by a static stride other than 0 or 1 element along the innermost dim."""
    return [op for op in k.ops if isinstance(op, loop.LoadOp) and steps_along(k, op, k.v) not in (None, 0, 1)]


def choose_tile(k, tile: Tile) -> tuple[Tile, int | None]:
    """(tile, blocked outer dim or None) for the nest `k` (a Space: mode, v, R, outer, ops, params known) given the
    requested tile (DEFAULT_TILE: the defaults above). A nest whose innermost dim is a reduction has no tile."""
    if not (k.mode == "B" and k.v is not None):
        return Tile(1, None), None
    strided = strided_loads(k) if k.outer else []
    if tile == DEFAULT_TILE:
        if k.R:
            tile = Tile(1, reduction_cols(k.ext_static[k.v]))
        elif strided:
            tile = Tile(*tuning.TRANSPOSE_TILE)
    if not k.outer or tile.rows == 1:
        return Tile(1, tile.cols), None
    # block the outer dim along which a transposed read is contiguous (its lines serve every row), else the last
    along = next((d for op in strided for d in reversed(k.outer) if steps_along(k, op, d) == 1), k.outer[-1])
    return tile, along
