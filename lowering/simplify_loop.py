"""simplify-loop: cleanups at the loop stage, as small rules plus CSE (irc.ir.cse), canonicalize and DCE (xDSL).

Bodies: constants fold, a float widened and narrowed back is itself, loads through a loop.view
read its source directly. Nests: outputs nobody reads are dropped, a value yielded twice becomes
one output, and a copy whose only readers are externs becomes a `loop.view` (a strided view of
its source; torch's kernels take strides, so the copy disappears).
"""

import operator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap, AffineSymExpr
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from irc.dialects import loop
from irc.dialects import tensor as tn
from irc.ir import apply_rules, rule
from irc.ir.cse import cse
from irc.ir.types import DYN, is_float

from .bufferize import library_fresh
from .fusion.legality import copy_source
from .lower_views import is_reshape_map

_FOLD = {
    arith.AddfOp: operator.add,
    arith.SubfOp: operator.sub,
    arith.MulfOp: operator.mul,
    arith.MaximumfOp: max,
    arith.MinimumfOp: min,
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.MaxSIOp: max,
    arith.MinSIOp: min,
}


def _value(v: SSAValue):
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr | IntegerAttr):
        return op.value.value.data
    return None


def _in_nest(op: Operation) -> bool:
    return isinstance(op.parent_op(), loop.NestOp)


def _fold_binary(op):
    """c1 (op) c2 -> c (float and integer add, sub, mul, max, min on constants, inside nests)."""
    if not _in_nest(op):
        return None
    a, b = _value(op.lhs), _value(op.rhs)
    if a is None or b is None or a != a or b != b:  # keep NaN semantics to the targets
        return None
    r = _FOLD[type(op)](a, b)
    t = op.result.type
    if is_float(t):
        return arith.ConstantOp(FloatAttr(float(r), t))
    return arith.ConstantOp(IntegerAttr(int(r), t)) if abs(r) < 2**31 else None


FOLD_RULES = tuple(rule(cls)(_fold_binary) for cls in _FOLD)


@rule(arith.TruncFOp)
def fold_trunc_of_ext(op):
    """truncf(extf(x)) -> x when it returns to x's type."""
    inner = op.input.owner
    if isinstance(inner, arith.ExtFOp) and inner.input.type == op.result.type:
        return inner.input
    return None


@rule(arith.TruncIOp)
def fold_trunci_of_ext(op):
    """trunci(extui(x)) or trunci(extsi(x)) -> x when it returns to x's type (an int8 value widened and narrowed)."""
    inner = op.input.owner
    if isinstance(inner, arith.ExtUIOp | arith.ExtSIOp) and inner.input.type == op.result.type:
        return inner.input
    return None


@rule(loop.LoadOp)
def fold_load_of_view(op: loop.LoadOp):
    """load (view x [v]) [m] -> load x [v . m]."""
    view = op.source.owner
    if not isinstance(view, loop.ViewOp):
        return None
    m, v = op.map.data, view.map.data
    results = tuple(e.replace_dims_and_symbols(m.results, ()) for e in v.results)
    return loop.LoadOp(view.source, AffineMap(m.num_dims, m.num_symbols, results), list(op.indices))


@rule(loop.ViewOp)
def fold_view_of_view(op: loop.ViewOp):
    """view (view x [a]) [b] -> view x [a . b]."""
    inner = op.source.owner
    if not isinstance(inner, loop.ViewOp):
        return None
    a, b = inner.map.data, op.map.data
    m = AffineMap(b.num_dims, 0, tuple(e.replace_dims_and_symbols(b.results, ()) for e in a.results))
    return loop.ViewOp(inner.source, m, op.result.type, list(op.sizes))


def _is_extern(op: Operation) -> bool:
    return op.name.startswith("tn.") or isinstance(op, loop.ViewOp)


@rule(loop.NestOp)
def canon_copy_to_view(nest: loop.NestOp):
    """A copy nest read only by externs, through a linear non-negative map: a loop.view, not a kernel. So is one
    the graph returns of a library's fresh result (bufferize returns such a view as it is: a training forward's
    attention output, saved in eager's layout for the backward)."""
    ld = copy_source(nest) if nest.res and len(nest.res) == 1 else None
    if ld is None or ld.source.type.get_element_type() != nest.res[0].type.get_element_type():
        return None
    users = [u.operation for u in nest.res[0].uses]
    fresh = isinstance(ld.source.owner, Operation) and library_fresh(ld.source.owner)  # bufferize returns its view
    if (
        not users
        or not all(_is_extern(u) or fresh and isinstance(u, func.ReturnOp) for u in users)
        or ld.map.data.num_symbols
        and _uses_symbols(ld.map.data)
    ):
        return None
    m = AffineMap(ld.map.data.num_dims, 0, ld.map.data.results)
    if loop.linear_coefficients(m) is None:
        return None
    if any(isinstance(u, tn.ReshapeOp) for u in users) and m != AffineMap.identity(m.num_dims):
        return (
            None  # a reshape needs its source contiguous: of a strided view, torch copies it at the mem stage, unfused
        )
    sizes = []
    for n, e in zip(nest.res[0].type.get_shape(), nest.extents):
        if n == DYN:
            if not isinstance(e, AffineSymExpr):
                return None
            sizes.append(nest.symbols[e.position])
    if len(nest.res[0].type.get_shape()) != nest.rank:
        return None
    return loop.ViewOp(ld.source, m, nest.res[0].type, sizes)


@rule(tn.DimOp)
def fold_dim_of_result(op: tn.DimOp):
    """dim(nest result) -> its extent's symbol; dim(view or reshape) -> its size operand."""
    owner, d = op.input.owner, op.dim.value.data
    if isinstance(owner, loop.NestOp) and owner.res:
        i = list(owner.res).index(op.input)
        shape = owner.res[i].type.get_shape()
        red = set(owner.reduction_dims()) if owner.output_kind(i) == "reduced" else set()
        extents = [e for k, e in enumerate(owner.extents) if owner.space_shape(bool(red))[k] != 1]
        inner = iter(extents)
        for k, n in enumerate(shape):
            if n == 1:
                continue
            e = next(inner)
            if k == d:
                return owner.symbols[e.position] if isinstance(e, AffineSymExpr) else None
        return None
    if isinstance(owner, loop.ViewOp | tn.ReshapeOp | tn.ExpandOp):
        k = sum(1 for n in owner.result.type.get_shape()[:d] if n == DYN)
        return owner.sizes[k]
    return None


def canon_symbols(nest: loop.NestOp) -> None:
    """Each symbol operand once, unused ones dropped; every map renumbered to match."""
    uniq: list[SSAValue] = []
    used = set()
    maps = [nest.space.data] + [op.map.data for op in nest.body.block.ops if isinstance(op, loop.LoadOp | loop.IndexOp)]
    for m in maps:
        used |= {x.position for e in m.results for x in e.dfs() if isinstance(x, AffineSymExpr)}
    for j, s in enumerate(nest.symbols):
        if j in used and s not in uniq:
            uniq.append(s)
    if uniq == list(nest.symbols):
        return
    remap = [AffineExpr.symbol(uniq.index(s)) if s in uniq else AffineExpr.constant(0) for s in nest.symbols]

    def fix(m: AffineMap) -> AffineMap:
        return AffineMap(
            m.num_dims,
            len(uniq),
            tuple(
                e.replace_dims_and_symbols([AffineExpr.dimension(i) for i in range(m.num_dims)], remap)
                for e in m.results
            ),
        )

    for op in nest.body.block.ops:
        if isinstance(op, loop.LoadOp | loop.IndexOp):
            op.properties["map"] = AffineMapAttr(fix(op.map.data))
    nest.properties["space"] = AffineMapAttr(fix(nest.space.data))
    nest.operands = [*uniq, *nest.outs]
    nest.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, [len(uniq), len(nest.outs)])


@rule(loop.NestOp)
def canon_copy_to_reshape(nest: loop.NestOp):
    """A row-major reshape copy read only by externs (and returned: a training forward saves the reshaped activation
    its matmul reads) stays a tn.reshape: at the mem stage it aliases a contiguous buffer, the returned one too."""
    ld = copy_source(nest) if nest.res and len(nest.res) == 1 else None
    if (
        ld is None
        or not isinstance(ld.source.owner, Operation)
        or ld.source.type.get_element_type() != nest.res[0].type.get_element_type()
    ):
        return None
    users = [u.operation for u in nest.res[0].uses]
    src, dst = ld.source.type.get_shape(), nest.res[0].type.get_shape()
    if (
        not users
        or not all(_is_extern(u) or isinstance(u, func.ReturnOp) for u in users)
        or DYN in src
        or DYN in dst
        or src == dst
    ):
        return None
    if (
        any(isinstance(u, func.ReturnOp) for u in users)
        and isinstance(ld.source.owner, loop.NestOp)
        and len(list(ld.source.uses)) == 1
        and [n for n in src if n != 1] == [n for n in dst if n != 1]
    ):
        return None  # fusion's output reshape writes a nest's only-read result in the returned shape itself
    if not is_reshape_map(src, dst, ld.map.data):
        return None
    return tn.ReshapeOp(ld.source, nest.res[0].type)


def _uses_symbols(m: AffineMap) -> bool:
    return any(isinstance(x, AffineSymExpr) for e in m.results for x in e.dfs())


def sink_constants(nest: loop.NestOp) -> None:
    """A body reads only constants of its own: xDSL's CSE merges a body's constant into an equal one outside (nest
    bodies are not isolated), and a kernel is outlined with its loads' sources and symbols as its only arguments."""
    block, copies = nest.body.block, {}
    for op in list(block.walk()):
        for i, v in enumerate(op.operands):
            c = v.owner
            if isinstance(c, arith.ConstantOp) and not nest.is_ancestor(c):
                if c not in copies:
                    copies[c] = c.clone()
                    block.insert_op_before(copies[c], block.first_op)
                op.operands[i] = copies[c].result


def drop_dead_outputs(nest: loop.NestOp) -> loop.NestOp | None:
    """A copy of the nest without the outputs nobody reads and with each yielded value once (None if nothing changes)."""
    if nest.outs:
        return None
    values = list(nest.yield_op.values)
    keep: list[int] = []
    same: dict[int, int] = {}
    for i, r in enumerate(nest.res):
        if not r.uses:
            continue
        twin = next((j for j in keep if values[j] is values[i] and nest.res[j].type == r.type), None)
        if twin is None:
            keep.append(i)
        else:
            same[i] = twin
    if len(keep) == len(values) or not keep:
        return None
    body = nest.body.clone()
    y = body.block.last_op
    new_yield = loop.YieldOp(*[y.values[i] for i in keep])
    body.block.insert_op_before(new_yield, y)
    y.detach()
    y.erase()
    new = loop.NestOp(nest.space.data, nest.iterator_kinds(), nest.symbols, [nest.res[i].type for i in keep], body=body)
    new.attributes.update(nest.attributes)
    nest.parent_block().insert_op_before(new, nest)
    for slot, i in enumerate(keep):
        nest.res[i].replace_all_uses_with(new.res[slot])
    for i, j in same.items():
        nest.res[i].replace_all_uses_with(new.res[keep.index(j)])
    nest.detach()
    nest.erase()
    return new


RULES = (
    *FOLD_RULES,
    fold_trunc_of_ext,
    fold_trunci_of_ext,
    fold_load_of_view,
    fold_view_of_view,
    canon_copy_to_view,
    canon_copy_to_reshape,
    fold_dim_of_result,
)


@dataclass(frozen=True)
class SimplifyLoopPass(ModulePass):
    """Fold body constants and casts, read through views, drop dead nest outputs, turn extern-only copies into views."""

    name = "simplify-loop"

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        CanonicalizePass().apply(ctx, module)
        apply_rules(module, RULES)
        cse(module)
        for f in module.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                for nest in [op for op in f.body.block.ops if isinstance(op, loop.NestOp)]:
                    sink_constants(nest)
                    canon_symbols(drop_dead_outputs(nest) or nest)
        DeadCodeElimination().apply(ctx, module)
