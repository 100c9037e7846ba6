"""What one buffer-form `loop.nest`, specialised for a launch, is to the kernel emitter: facts, no code.

Let v be the innermost dim whose extent is not a static 1. When v is parallel ("mode B"), each item runs v in
vectors of L lanes; when v is a reduction dim ("mode A", rows), each item is one row. The outer dims are the
other parallel dims, split into items (with a tile: tiles.py). The bounds analysis (affine.interval) says which
loads need guards and proves that every output is the size of the space. The emitter (emit.py) and each of its
parts read these facts; none of them changes them.
"""

from __future__ import annotations

from irc.dialects import loop

from ..runtime import jit
from . import tuning
from .affine import Lin, coefficient, interval, lane_coefficient, to_lin, within
from .tiles import Tile, choose_tile
from .types import Unsupported


class Space:
    """The nest's ops and outputs, its dims' extents (linear forms over runtime cells, static where known), the
    vector dim v, the reduction dims R, the vector width L, the mode, the outer dims, the tile, the guards of its
    loads and the dims of its outputs."""

    def __init__(self, nest: loop.NestOp, params, lanes: int, tile: Tile):
        self.nest, self.params = nest, list(params)
        self.args = list(nest.parent_block().args)
        self.ops = [op for op in nest.body.block.ops if not isinstance(op, loop.YieldOp)]
        self.opset = set(self.ops)
        self.yields = list(nest.yield_op.values)
        self.reduces = [op for op in self.ops if isinstance(op, loop.ReduceOp)]
        self.after_reduce: set = set()  # the body's ops that read a reduction's value, directly or through others
        for op in self.ops:
            if isinstance(op, loop.ReduceOp) or any(o.owner in self.after_reduce for o in op.operands):
                self.after_reduce.add(op)
        self.sym_lins = [params[self.args.index(s)] for s in nest.symbols]
        self.ext_lin = [to_lin(e, self.sym_lins) for e in nest.extents]
        self.ext_static = [q.const if q is not None and q.static else None for q in self.ext_lin]
        self.R = [d for d in nest.reduction_dims() if self.ext_static[d] != 1]
        live = [d for d in range(nest.rank) if self.ext_static[d] != 1]
        self.v = live[-1] if live else None
        self.mode = "A" if self.v is not None and self.v in self.R else "B"
        n = self.ext_static[self.v] if self.v is not None else None
        small = n is not None and n < tuning.MIN_LANES_EXTENT
        self.L = None if self.v is None or small or lanes < 2 else lanes
        # a row wider than the host's vector (default_lanes: up to LANES_REDUCING of them) steps at L, then at the
        # native width, then one masked native vector: a short runtime row would otherwise be one masked wide vector
        native = jit.host().lanes(32)
        self.narrow = native if self.mode == "A" and self.L and native < self.L else None
        parallel_v = self.v if self.mode == "B" else None
        self.outer = [d for d in nest.parallel_dims() if self.ext_static[d] != 1 and d != parallel_v]
        self.tile, self.blocked = choose_tile(self, tile)
        # every vector of a lanes loop starts at a multiple of the width: a row's from 0, an item's from a multiple
        # of cols
        cols = self.tile.cols
        self.aligned = self.L is not None and (self.mode == "A" or bool(cols) and cols % self.L == 0)
        # elements one step reads contiguously along v: a row, or an item's columns (None: known at run time)
        self.run = self.ext_static[self.v] if self.v is not None else 1
        if self.mode == "B" and self.tile.cols:
            self.run = min(self.run or self.tile.cols, self.tile.cols)
        self.guards = {op: self._guards(op) for op in self.ops if isinstance(op, loop.LoadOp)}
        self.out_dims = [self._out_dims(i) for i in range(len(self.yields))]

    def spec(self, value):
        """The launch's parameter for a block argument of the nest's function: a BufSpec, a Lin or an int."""
        return self.params[self.args.index(value)]

    def lane_step(self, e, width: int) -> int | None:
        """How far index expression e moves per lane of the vector dim (None: not one constant step). Vectors of an
        aligned lanes loop start at multiples of the width, so views that split the vector dim (heads, stacked
        q/k/v) read whole vectors (affine.LaneCoefficient)."""
        return lane_coefficient(e, self.v, width) if self.aligned else coefficient(e, self.v)

    def out_index(self, i: int, dims) -> list:
        """Output i's index at the point `dims` of the space."""
        return [0 if d is None else dims[d] for d in self.out_dims[i]]

    def _guards(self, op: loop.LoadOp) -> list[bool]:
        """Per index of the load: not proven inside the buffer (the emitter clamps it)."""
        spec = self.spec(op.source)
        exts = [q for q in self.ext_lin] + [None] * len(op.indices)
        return [not within(interval(e, exts, self.sym_lins), size) for e, size in zip(op.map.data.results, spec.sizes)]

    def _out_dims(self, i: int) -> list[int | None]:
        """For each dim of output i, the space dim it holds (None for a size-1 dim); sizes proven to match."""
        nest = self.nest
        reduced = nest.output_kind(i) == "reduced"
        space = nest.space_shape(reduced)
        spec = self.spec(nest.outs[i])
        inner = iter(d for d, n in enumerate(space) if n != 1)
        out = [None if n == 1 else next(inner) for n in nest.output_types()[i].get_shape()]
        for d, size in zip(out, spec.sizes):
            if d is not None and (self.ext_lin[d] is None or not within((Lin(0), self.ext_lin[d] - 1), size)):
                raise Unsupported(f"output {i} is not provably the size of the space")
        return out
