"""One mem-stage kernel (`func.func @kernelN` holding one buffer-form loop.nest) as Triton source.

The iteration space splits into its parallel dims, flattened row-major into `xindex` (one program per
XBLOCK of them), and its reduction dims, flattened into `rindex`. Each dim's index is recovered from
the flat one by // and %, and every load and store is pointer arithmetic over the buffer's strides
(runtime arguments: graph inputs have any strides). Masks: `xmask`/`rmask` for the block tails, plus
a range check on an index component the bounds cannot prove (cat and pad read out of range in the
arm a select discards).

Three shapes of kernel:

    pointwise   no reduction dims: 1-D blocks of XBLOCK points
    single      the reduction extent is static and small: the whole row in registers ([XBLOCK, RBLOCK]),
                every value computed once, tl.sum / tl.reduce over axis 1
    looped      a loop over RBLOCK-sized chunks per reduction depth (softmax: max, then sum, then the
                output), accumulating lane-wise and combining the lanes after the loop; values of a
                lower depth that vary along the row are recomputed in each loop

Several outputs per kernel: each `loop.yield` value is stored to its buffer, full outputs with the
row, reduced outputs once per row.
"""

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Operation
from xdsl.ir.affine import AffineConstantExpr

from irc.dialects import loop
from irc.ir.index_math import INF, bounds

from .affine import Printer
from .ops import emit_op
from .prelude import PRELUDE
from .reduce import FLOAT_COMBINE, INT_COMBINE, identity, identity_value, lanes_reduce
from .types import Unsupported, compute_type, is_float, literal, pointer_type, storage_type, stored

SINGLE_MAX = 4096  # the widest static row kept whole in registers


@dataclass
class KernelSource:
    """The Triton source of one kernel and what its launcher needs to know."""

    name: str  # the @triton.jit function's name (the mem-stage func's name)
    kernel: str  # the function's source alone (what irc-opt -t triton prints)
    mode: str  # "pointwise" | "single" | "looped"
    params: list[tuple[str, int]]  # per func argument: ("buffer", rank) or ("index", 0)
    rblock: int | None  # single: the static RBLOCK
    arg_types: dict[str, str]  # every argument but the block sizes -> its Triton signature type ("*fp32", "i64")

    @property
    def text(self) -> str:
        """The whole file: the prelude, then the kernel."""
        return PRELUDE + "\n\n" + self.kernel


class _Gen:
    def __init__(self, fn: func.FuncOp):
        nests = [o for o in fn.body.block.ops if isinstance(o, loop.NestOp) and o.outs]
        if len(nests) != 1:
            raise Unsupported(f"@{fn.sym_name.data} holds {len(nests)} buffer-form nests, not one")
        self.fn, self.nest = fn, nests[0]
        self.tile_2d: tuple[str, ...] = ()  # the matmul template's epilogue (matmul.py): the tile's row and column dims
        nest = self.nest
        outs = set(nest.outs)
        self.names: dict = {}
        self.params: list[tuple[str, int]] = []
        sig: list[str] = []
        types: list[str] = []
        counts = {"in": 0, "out": 0, "s": 0}
        for a in fn.body.block.args:
            if isinstance(a.type, MemRefType):
                kind = "out" if a in outs else "in"
                name = f"{kind}{counts[kind]}"
                counts[kind] += 1
                rank = len(a.type.get_shape())
                self.params.append(("buffer", rank))
                sig += [name, *(f"{name}_n{k}" for k in range(rank)), *(f"{name}_s{k}" for k in range(rank))]
                types += [pointer_type(a.type.get_element_type()), *["i64"] * (2 * rank)]
            elif isinstance(a.type, IndexType):
                name = f"s{counts['s']}"
                counts["s"] += 1
                self.params.append(("index", 0))
                sig.append(name)
                types.append("i64")
            else:
                raise Unsupported(f"kernel argument of type {a.type}")
            self.names[a] = name
        self.signature = [*sig, "xnumel", "rnumel", "XBLOCK: tl.constexpr", "RBLOCK: tl.constexpr"]
        self.arg_types = dict(zip(self.signature, [*types, "i64", "i64"]))  # sizes and strides as launched when large
        self.syms = [self.names[s] for s in nest.symbols]
        self.P, self.R = nest.parallel_dims(), nest.reduction_dims()
        ext = nest.extents
        self.static = [e.value if isinstance(e, AffineConstantExpr) else None for e in ext]
        sym_printer = Printer([], self.syms)
        self.extent_text = [sym_printer.text(e) for e in ext]
        rn = 1
        for d in self.R:
            rn = rn * self.static[d] if self.static[d] is not None and rn is not None else None
        self.rn = rn
        if not self.R:
            self.mode = "pointwise"
        elif rn is not None and rn <= SINGLE_MAX:
            self.mode = "single"
        else:
            self.mode = "looped"
        self.rblock = max(1, 1 << (rn - 1).bit_length()) if self.mode == "single" else None
        self.unit = "[1]" if self.mode == "pointwise" else "[1, 1]"  # the shape of a value that varies along nothing
        dim_names = [None if n == 1 else f"d{d}" for d, n in enumerate(self.static)]
        self.printer = Printer(dim_names, self.syms)
        self._analyse()

    # -- analysis ------------------------------------------------------------------------------
    def _analyse(self):
        """vary[v]: the groups ("x", "r") a body value varies along; depth[v]: reductions on its longest chain."""
        self.vary, self.depth = {}, {}
        group = {d: "x" for d in self.P} | {d: "r" for d in self.R}
        rank = self.nest.rank
        for op in self.nest.body.block.ops:
            if isinstance(op, loop.YieldOp):
                break
            ins = list(op.operands) if not isinstance(op, loop.LoadOp) else list(op.indices)
            v = frozenset().union(*(self.vary[o] for o in ins)) if ins else frozenset()
            depth = max((self.depth[o] for o in ins), default=0)
            if isinstance(op, loop.LoadOp | loop.IndexOp):
                used = op.map.data.used_dims()
                v = v | {group[d] for d in used if d < rank and self.static[d] != 1}
            elif isinstance(op, loop.ReduceOp):
                v, depth = v - {"r"}, depth + 1
            self.vary[op.results[0]], self.depth[op.results[0]] = v, depth

    def _in_body(self, v) -> bool:
        return isinstance(v.owner, Operation) and v.owner.parent_op() is self.nest

    def _needed(self, roots, through_reductions: bool = False) -> set:
        """Every body value the roots depend on; without `through_reductions`, a reduction's inputs are left out
        (the looped mode computes them in the reduction's own loop)."""
        seen, stack = set(), list(roots)
        while stack:
            v = stack.pop()
            if v in seen or not self._in_body(v):
                continue
            seen.add(v)
            if through_reductions or not isinstance(v.owner, loop.ReduceOp):
                stack += list(v.owner.operands)
        return seen

    # -- emission ------------------------------------------------------------------------------
    def shape(self, groups) -> str:
        if self.mode == "pointwise":
            return "[XBLOCK]"
        return "[XBLOCK, RBLOCK]" if "r" in groups else "[XBLOCK, 1]"

    def index_block(self, lines, ind, group: str):
        """Lines recovering each dim of `group` from the flat index."""
        dims = self.P if group == "x" else self.R
        flat = "xindex" if group == "x" else "rindex"
        live = [d for d in dims if self.static[d] != 1]
        for i, d in enumerate(live):
            later = [self.extent_text[k] for k in live[i + 1 :]]
            div = " * ".join(later)
            expr = flat if not later else f"{flat} // ({div})" if len(later) > 1 else f"{flat} // {div}"
            if i > 0:
                expr = f"({expr}) % {self.extent_text[d]}" if later else f"{expr} % {self.extent_text[d]}"
            lines.append(f"{ind}d{d} = {expr}")

    def load(self, op: loop.LoadOp, env) -> str:
        src = self.names[op.source]
        m = op.map.data
        extra = [env[i] for i in op.indices]
        printer = Printer(self.printer.dims + extra, self.syms)
        dims = [(0, n - 1 if n is not None else INF) for n in self.static] + [(-INF, INF)] * len(extra)
        shape = op.source.type.get_shape()
        terms, checks, block = [], [], False
        for k, e in enumerate(m.results):
            text = printer.text(e)
            lo, hi = bounds(e, dims, [(0, INF)] * len(self.syms))
            if text != "0":
                terms.append(f"{text} * {src}_s{k}" if shape[k] != 1 else None)
                block |= shape[k] != 1 and any(d >= len(self.static) or self.static[d] != 1 for d in e.used_dims())
                if lo < 0:
                    checks.append(f"({text} >= 0)")
                if shape[k] == loop.DYN or hi > shape[k] - 1:
                    checks.append(f"({text} < {src}_n{k})")
        terms = [t for t in terms if t]
        groups = self.vary[op.result]
        masks = (["xmask"] if "x" in groups else []) + (["rmask"] if "r" in groups else []) + checks
        ptr = f"{src} + {' + '.join(terms)}" if terms else f"{src} + tl.full({self.unit}, 0, tl.int64)"
        if terms and masks and not block:  # a pointer of scalars under a block mask: Triton's compile wants a block
            ptr += f" + tl.full({self.unit}, 0, tl.int64)"
        mask = f", mask={' & '.join(masks)}, other=0" if masks else ""
        t = op.result.type
        widen = f".to({compute_type(t)})" if storage_type(t) != compute_type(t) else ""
        return f"tl.load({ptr}{mask}){widen}"

    def value(self, op, env) -> str:
        if isinstance(op, loop.LoadOp):
            return self.load(op, env)
        if isinstance(op, loop.IndexOp):
            text = self.printer.text(op.map.data.results[0])
            return (
                text if self.vary[op.result] else f"(tl.full({self.unit}, 0, tl.int64) + {text})"
            )  # never 0-d (see types.literal)
        if isinstance(op, arith.ConstantOp):
            v = op.value
            return literal(v.value.data if hasattr(v, "value") else v.get_values()[0], op.result.type, self.unit)
        return emit_op(op, [env[o] for o in op.operands])

    def emit_ops(self, lines, ind, env: dict, wanted: set, suffix: str):
        for op in self.nest.body.block.ops:
            if isinstance(op, loop.YieldOp):
                break
            r = op.results[0]
            if r not in wanted or r in env:
                continue
            if isinstance(op, loop.ReduceOp):
                self.reduce_inline(lines, ind, op, env)
                continue
            name = f"v{len(env)}{suffix}"
            lines.append(f"{ind}{name} = {self.value(op, env)}")
            env[r] = name

    def reduce_parts(self, op: loop.ReduceOp):
        kind = op.kind.data.value
        t = compute_type(op.input.type)
        table = FLOAT_COMBINE if is_float(op.input.type) else INT_COMBINE
        if kind not in table and kind not in ("argmax", "argmin"):
            raise Unsupported(f"loop.reduce {kind} of {op.input.type}")
        return kind, t, table.get(kind)

    def lanes(self, op: loop.ReduceOp, x: str, idx: str | None) -> str:
        kind, t, _ = self.reduce_parts(op)
        return lanes_reduce(kind, t, x, idx, is_float(op.input.type))

    def reduce_inline(self, lines, ind, op: loop.ReduceOp, env):
        """single mode: the row is in registers; one masked reduction over axis 1."""
        kind, t, combine = self.reduce_parts(op)
        x = env[op.input]
        full = "[XBLOCK, RBLOCK]"
        name = f"v{len(env)}"
        masked = f"tl.where(rmask, tl.broadcast_to({x}, {full}), {identity(kind, t)})"
        lines.append(f"{ind}{name} = {self.lanes(op, masked, f'tl.broadcast_to(rindex, {full}).to(tl.int64)')}")
        env[op.result] = name

    def store(self, lines, ind, i: int, v, env):
        nest = self.nest
        buf = nest.outs[i]
        name = self.names[buf]
        t = buf.type.get_element_type()
        reduced = nest.output_kind(i) == "reduced" and bool(self.R)
        groups = {"x"} if reduced or self.mode == "pointwise" else {"x", "r"}
        space = nest.space_shape(nest.output_kind(i) == "reduced")
        it = iter(d for d, n in enumerate(space) if n != 1)
        terms, used = [], set()
        for k, n in enumerate(buf.type.get_shape()):
            if n == 1:
                continue
            d = next(it)
            if self.static[d] != 1:
                terms.append(f"d{d} * {name}_s{k}")
                used.add("x" if d in self.P else "r")
        shape = self.shape(groups)
        off = " + ".join(terms) if terms else "0"
        # a 2-D tile needs an offset of its full shape: a size-1 dim of the product has no term
        partial = self.tile_2d and not all(any(t.startswith(f"{n} * ") for t in terms) for n in self.tile_2d)
        if used != groups or partial:
            off = f"tl.full({shape}, 0, tl.int64) + {off}" if off != "0" else f"tl.full({shape}, 0, tl.int64)"
        val = env[v]
        if self.vary.get(v, frozenset()) != groups:
            val = f"tl.broadcast_to({val}, {shape})"
        val = stored(val, storage_type(t), compute_type(t))
        mask = "xmask" if groups == {"x"} else "xmask & rmask"
        lines.append(f"{ind}tl.store({name} + {off}, {val}, mask={mask})")

    def generate(self) -> KernelSource:
        nest = self.nest
        lines = [f"@triton.jit", f"def {self.fn.sym_name.data}({', '.join(self.signature)}):"]
        ind = "    "
        x_suffix = "" if self.mode == "pointwise" else "[:, None]"
        lines.append(f"{ind}xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK){x_suffix}")
        lines.append(f"{ind}xmask = xindex < xnumel")
        self.index_block(lines, ind, "x")
        values = list(nest.yield_op.values)
        env: dict = {}
        if self.mode == "looped":
            self.generate_looped(lines, ind, env, values)
        else:
            if self.mode == "single":
                lines.append(f"{ind}rindex = tl.arange(0, RBLOCK)[None, :]")
                lines.append(f"{ind}rmask = rindex < rnumel")
                self.index_block(lines, ind, "r")
            wanted = self._needed(values, through_reductions=True)
            self.emit_ops(lines, ind, env, wanted, "")
            for i, v in enumerate(values):
                self.store(lines, ind, i, v, env)
        return KernelSource(
            self.fn.sym_name.data, "\n".join(lines) + "\n", self.mode, self.params, self.rblock, self.arg_types
        )

    def generate_looped(self, lines, ind, env, values):
        """One loop over the row per reduction depth, then one for the full outputs."""
        reduces = [op for op in self.nest.body.block.ops if isinstance(op, loop.ReduceOp)]
        outer = [op for op in self.nest.body.block.ops if not isinstance(op, loop.ReduceOp | loop.YieldOp)]
        full = [(i, v) for i, v in enumerate(values) if self.nest.output_kind(i) != "reduced"]
        max_depth = max((self.depth[r.result] for r in reduces), default=0)
        for level in range(1, max_depth + 1):
            reds = [r for r in reduces if self.depth[r.result] == level]
            wanted = self._needed([r.input for r in reds])
            self.emit_outer(lines, ind, env, outer, wanted)
            accs = []
            for r in reds:
                kind, t, _ = self.reduce_parts(r)
                acc = f"acc{len(env)}_{len(accs)}"
                v = "_v" if kind in ("argmax", "argmin") else ""
                lines.append(f"{ind}{acc}{v} = tl.full([XBLOCK, RBLOCK], {identity_value(kind, t)}, {t})")
                if kind in ("argmax", "argmin"):
                    lines.append(f"{ind}{acc}_i = tl.full([XBLOCK, RBLOCK], 2**62, tl.int64)")
                accs.append(acc)
            lines.append(f"{ind}for roff in range(0, rnumel, RBLOCK):")
            inner = ind + "    "
            local = dict(env)
            self.loop_header(lines, inner)
            self.emit_ops(lines, inner, local, wanted, f"_{level}")
            for r, acc in zip(reds, accs):
                kind, t, combine = self.reduce_parts(r)
                x = f"tl.where(rmask, tl.broadcast_to({local[r.input]}, [XBLOCK, RBLOCK]), {identity(kind, t)})"
                if kind in ("argmax", "argmin"):
                    idx = "tl.broadcast_to(rindex, [XBLOCK, RBLOCK]).to(tl.int64)"
                    lines.append(f"{inner}{acc}_v, {acc}_i = _{kind}({acc}_v, {acc}_i, {x}, {idx})")
                else:
                    lines.append(f"{inner}{acc} = {combine.format(a=acc, b=x)}")
            for r, acc in zip(reds, accs):
                kind, t, combine = self.reduce_parts(r)
                name = f"v{len(env)}"
                x = f"{acc}_v" if kind in ("argmax", "argmin") else acc
                lines.append(f"{ind}{name} = {self.lanes(r, x, f'{acc}_i')}")
                env[r.result] = name
        wanted = self._needed(values)
        self.emit_outer(lines, ind, env, outer, wanted)
        if full:
            lines.append(f"{ind}for roff in range(0, rnumel, RBLOCK):")
            inner = ind + "    "
            local = dict(env)
            self.loop_header(lines, inner)
            self.emit_ops(lines, inner, local, wanted, "_out")
            for i, v in full:
                self.store(lines, inner, i, v, local)
        for i, v in enumerate(values):
            if self.nest.output_kind(i) == "reduced":
                self.store(lines, ind, i, v, env)

    def emit_outer(self, lines, ind, env, outer, wanted):
        """Values that do not vary along the row, once per row block, outside the loops."""
        ready = {o.results[0] for o in outer if "r" not in self.vary[o.results[0]]}
        self.emit_ops(lines, ind, env, wanted & ready, "")

    def loop_header(self, lines, ind):
        lines.append(f"{ind}rindex = roff + tl.arange(0, RBLOCK)[None, :]")
        lines.append(f"{ind}rmask = rindex < rnumel")
        self.index_block(lines, ind, "r")


def kernel_source(fn: func.FuncOp) -> KernelSource:
    """The Triton source of one mem-stage kernel; raises Unsupported for what the target cannot emit."""
    return _Gen(fn).generate()


def kernel_funcs(module) -> list[func.FuncOp]:
    """The mem-stage functions that are kernels (they hold a buffer-form loop.nest)."""
    return [
        op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and any(isinstance(o, loop.NestOp) and o.outs for o in op.body.block.ops)
    ]
