"""FX GraphModule (core aten, after AOT autograd) -> a `tn` module with one func.func @main.

Every call_function node goes through aten_table.IMPORTERS; a node without a translation
becomes an explicit `tn.aten_call` (eager fallback) with its reason, as does every call of an op
named in options["eager_ops"] (a user bisecting a mismatch or a slowdown). Nodes that produce
SymInts become index arithmetic. What cannot be represented at all raises GraphUnsupported,
and the caller runs the whole graph eagerly instead.
"""

import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
from torch._ops import OpOverload
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.utils._pytree import tree_flatten, tree_map
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from irc.dialects import tensor as tn
from irc.dialects.tensor.fallback import CannotEncode, encode_args, overload_name
from irc.ir.types import UnsupportedDtype, element_type, tensor_type, torch_dtype

from .aten_table import IMPORTERS, Unsupported, load_all
from .effects import import_effect
from .symbols import SymbolTable, concrete

# Nodes that only constrain the ShapeEnv; they compute nothing the program needs.
IGNORED_TARGETS = {
    torch.ops.aten._assert_scalar.default,
    torch.ops.aten.sym_constrain_range_for_size.default,
    torch.ops.aten._assert_tensor_metadata.default,
}

# Ops whose FX meta shapes are only bounds of what eager returns (data-dependent sizes): irc cannot
# give their results a type, so a graph holding one runs eagerly.
DATA_DEPENDENT_SHAPES = {
    torch.ops.aten._embedding_bag.default,
    torch.ops.aten._embedding_bag_forward_only.default,
}


class GraphUnsupported(Exception):
    """The graph as a whole cannot be compiled by irc (it runs eagerly, and the report says why)."""


@dataclass
class Fallback:
    target: str
    reason: str


@dataclass
class ImportResult:
    module: ModuleOp
    # How to rebuild the graph's output list: ("result", i) for the i-th func result, ("const", v) otherwise.
    outputs: list[tuple[str, Any]]
    # Tensors the graph reads through get_attr, appended to the call's arguments in this order.
    constants: list[torch.Tensor]
    imported: Counter = field(default_factory=Counter)
    fallbacks: list[Fallback] = field(default_factory=list)
    # Graph inputs the graph writes (AOT autograd's kept input mutations, `copy_(input, value)`): (input index,
    # func result holding the value), the results after those of `outputs`. The runtime writes each value into
    # its input after a call (ArgSpec.written_from).
    writes: list[tuple[int, int]] = field(default_factory=list)


class ImportBuilder:
    """What importers build with: op insertion, result types from FX meta, scalars, casts, symbolic sizes."""

    def __init__(self, symbols: SymbolTable):
        self.symbols = symbols
        self.body: list[Operation] = []

    # -- insertion ----------------------------------------------------------------------------
    def insert(self, op: Operation) -> Operation:
        self.body.append(op)
        return op

    def add(self, op: Operation) -> SSAValue:
        """Insert a single-result op and return its result."""
        return self.insert(op).results[0]

    def checkpoint(self) -> int:
        return len(self.body)

    def rollback(self, mark: int) -> None:
        for op in reversed(self.body[mark:]):
            op.drop_all_references()
        del self.body[mark:]

    # -- types --------------------------------------------------------------------------------
    @staticmethod
    def type_of(val: torch.Tensor) -> TensorType:
        return tensor_type(val.dtype, val.shape)

    @staticmethod
    def meta(node: torch.fx.Node):
        return node.meta["val"]

    def result_type(self, node: torch.fx.Node, i: int | None = None) -> TensorType:
        val = self.meta(node)
        return self.type_of(val if i is None else val[i])

    # -- sizes --------------------------------------------------------------------------------
    def index(self, size) -> SSAValue:
        return self.symbols.value(size)

    def dynamic_sizes(self, shape) -> list[SSAValue]:
        """Index values for the `?` dims of a meta shape, in order."""
        return [self.index(d) for d in shape if concrete(d) is None]

    # -- scalars and casts --------------------------------------------------------------------
    def constant(self, value, dtype: torch.dtype) -> SSAValue:
        """A 0-d constant holding `value` as torch would store it in `dtype` (ints wrap, floats round)."""
        if dtype.is_complex or isinstance(value, complex):
            raise Unsupported("complex constant")
        t = TensorType(element_type(dtype), [])
        try:
            wide = torch.float64 if isinstance(value, float) else None  # a Python float is a double: never via f32
            with unset_fake_temporarily():  # the import runs under AOT autograd's fake mode, slow for every constant
                stored = torch.tensor(value, dtype=wide).to(dtype).item()
            value = float(stored) if dtype.is_floating_point else int(stored)
            attr = DenseIntOrFPElementsAttr.from_list(t, [value])
        except (OverflowError, RuntimeError, TypeError, ValueError) as e:
            raise Unsupported(f"constant {value!r} of {dtype}: {e}") from None
        return self.add(tn.ConstantOp(attr))

    def convert(self, v: SSAValue, dtype: torch.dtype) -> SSAValue:
        el = element_type(dtype)
        if v.type.get_element_type() == el:
            return v
        return self.add(tn.ConvertOp(v, el))

    def tensor(self, arg, dtype: torch.dtype) -> SSAValue:
        """An SSA tensor of `dtype` for a tensor, a Python number, or a SymInt index value."""
        if isinstance(arg, SSAValue) and isinstance(arg.type, IndexType):
            return self.convert(self.add(tn.FromIndexOp(arg)), dtype)
        if isinstance(arg, SSAValue):
            return self.convert(arg, dtype)
        if isinstance(arg, (bool, int, float)):
            return self.constant(arg, dtype)
        raise Unsupported(f"cannot use {type(arg).__name__} {arg!r} as a tensor operand")

    @staticmethod
    def dtype(v: SSAValue) -> torch.dtype:
        return torch_dtype(v.type.get_element_type())

    def reshape(self, v: SSAValue, shape) -> SSAValue:
        """v's elements in row-major order under a meta shape (ints or SymInts)."""
        t = tensor_type(self.dtype(v), shape)
        if t == v.type and t.has_static_shape():  # with `?` dims equal types say nothing about sizes
            return v
        return self.add(tn.ReshapeOp(v, t, self.dynamic_sizes(shape)))

    def fit(self, v, val):
        """v under FX's type for it (meta `val`): where the importer left `?` in a dim that FX knows (the ShapeEnv
        specialised a symbolic size: a broadcast pinned it, layer_norm over it needs 1), or a static size where FX
        keeps the symbol (a `?` operand broadcast against a static one the ShapeEnv equated it with), a reshape
        makes the type say so. Anything else is left for the importer's type check to report."""
        if not isinstance(v, SSAValue) or not isinstance(val, torch.Tensor) or not isinstance(v.type, TensorType):
            return v
        want = self.type_of(val)
        got, shape = v.type.get_shape(), want.get_shape()
        if v.type == want or v.type.get_element_type() != want.get_element_type() or len(got) != len(shape):
            return v
        if any(g != w and g >= 0 and w >= 0 for g, w in zip(got, shape)):  # two different sizes
            return v
        return self.reshape(v, val.shape)

    def expand(self, v: SSAValue, shape, dtype: torch.dtype | None = None) -> SSAValue:
        """Broadcast v (0-d or lower rank) to a meta shape."""
        el = v.type.get_element_type() if dtype is None else element_type(dtype)
        t = tensor_type(torch_dtype(el), shape)
        if t == v.type and t.has_static_shape():
            return v
        return self.add(tn.ExpandOp(v, t, self.dynamic_sizes(shape)))


class GraphImporter:
    def __init__(self, gm: torch.fx.GraphModule, eager_ops: frozenset[str] = frozenset()):
        load_all()
        self.gm = gm
        self.eager_ops = eager_ops  # "aten::addmm" (every overload) or "aten::addmm.default" (options.eager_op_names)
        self.symbols = SymbolTable()
        self.b = ImportBuilder(self.symbols)
        self.env: dict[torch.fx.Node, Any] = {}
        self.imported: Counter = Counter()
        self.fallbacks: list[Fallback] = []
        self.writes: dict[int, SSAValue] = {}  # input index -> the value copy_ writes into it (the last one)

    # -- arguments ----------------------------------------------------------------------------
    def _arg_type(self, val):
        if isinstance(val, torch.Tensor):
            return self.b.type_of(val)
        if isinstance(val, torch.SymInt):
            return IndexType()
        raise GraphUnsupported(f"graph input of type {type(val).__name__}")

    def _bind_symbols(self, block: Block, inputs: list[Any]) -> None:
        for arg, val in zip(block.args, inputs):
            if isinstance(val, torch.SymInt) and val.node.expr.is_Symbol:
                self.symbols.bind(val.node.expr, lambda a=arg: a)
        for arg, val in zip(block.args, inputs):
            if isinstance(val, torch.Tensor):
                for d, size in enumerate(val.shape):
                    if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                        self.symbols.bind(size.node.expr, lambda a=arg, d=d: self.symbols.emit(tn.DimOp(a, d)))

    def map_args(self, x):
        return tree_map(lambda a: self.env[a] if isinstance(a, torch.fx.Node) else a, x)

    # -- the walk -----------------------------------------------------------------------------
    def run(self) -> ImportResult:
        nodes = list(self.gm.graph.nodes)
        placeholders = [n for n in nodes if n.op == "placeholder"]
        self.input_index = {n: i for i, n in enumerate(placeholders)}
        inputs = [n.meta.get("val") for n in placeholders]
        constants: list[torch.Tensor] = []
        const_nodes = [n for n in nodes if n.op == "get_attr"]
        for n in const_nodes:
            t = getattr(self.gm, n.target)
            if not isinstance(t, torch.Tensor):
                raise GraphUnsupported(f"get_attr of {type(t).__name__}")
            constants.append(t)
        arg_vals = inputs + [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta") for t in constants]
        try:
            types = [self._arg_type(v) for v in arg_vals]
        except UnsupportedDtype as e:
            raise GraphUnsupported(str(e)) from None
        block = Block(arg_types=types)
        for n, a in zip(placeholders + const_nodes, block.args):
            a.name_hint = _name(n.name)
            self.env[n] = a
        for n, val in zip(placeholders, inputs):
            if isinstance(val, torch.SymInt) and concrete(val) is not None:
                self.env[n] = concrete(val)
        self._bind_symbols(block, arg_vals)

        outputs: list[tuple[str, Any]] = []
        results: list[SSAValue] = []
        for node in nodes:
            if node.op == "call_function":
                self._call(node)
            elif node.op == "output":
                for o in tree_flatten(node.args[0])[0] if node.args[0] is not None else []:
                    v = self.env.get(o) if isinstance(o, torch.fx.Node) else o
                    if isinstance(v, SSAValue):
                        outputs.append(("result", len(results)))
                        results.append(v)
                    else:
                        outputs.append(("const", v))
            elif node.op not in ("placeholder", "get_attr"):
                raise GraphUnsupported(f"FX node kind {node.op}")

        writes = []
        for i, v in self.writes.items():
            writes.append((i, len(results)))
            results.append(v)
        ret = func.ReturnOp(*results)
        for op in (*self.symbols.prologue, *self.b.body, ret):
            block.add_op(op)
        main = func.FuncOp("main", ([a.type for a in block.args], [r.type for r in results]), Region(block))
        module = ModuleOp([main])
        return ImportResult(module, outputs, constants, self.imported, self.fallbacks, writes)

    def _call(self, node: torch.fx.Node) -> None:
        target = node.target
        val = node.meta.get("val")
        if target in IGNORED_TARGETS:
            return
        if target is operator.getitem:
            self.env[node] = self.env[node.args[0]][node.args[1]]
            return
        if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
            c = concrete(val)
            self.env[node] = c if c is not None else self._sym(node, val)
            return
        if target is torch.ops.higher_order.with_effects:
            self._with_effects(node)
            return
        if not isinstance(target, OpOverload):
            raise GraphUnsupported(f"call of {target}")
        if target is torch.ops.aten.copy_.default and node.args[0].op == "placeholder":
            self._input_write(node)
            return
        args, kwargs = self.map_args(node.args), self.map_args(node.kwargs)
        if {overload_name(target), target._schema.name} & self.eager_ops:
            self._fallback(node, "named in options['eager_ops']")
            return
        importer = IMPORTERS.get(target)
        if importer is None:
            self._fallback(node, "no importer")
            return
        mark = self.b.checkpoint()
        try:
            out = importer(self.b, node, *args, **kwargs)
        except (Unsupported, UnsupportedDtype) as e:
            self.b.rollback(mark)
            self._fallback(node, str(e))
            return
        vals = node.meta.get("val")
        if isinstance(vals, (list, tuple)) and isinstance(out, (list, tuple)) and len(vals) == len(out):
            out = type(out)(self.b.fit(v, val) for v, val in zip(out, vals))
        elif not isinstance(out, (list, tuple)):
            out = self.b.fit(out, vals)
        self._check(node, out)
        self.env[node] = out
        self.imported[overload_name(target)] += 1

    def _input_write(self, node: torch.fx.Node) -> None:
        """`copy_(input, src)`: the value (src as the input's dtype and shape) becomes a result the runtime writes
        into the input; later reads of the input in the graph see it."""
        dst, src = node.args[0], node.args[1]
        if not isinstance(self.env.get(dst), SSAValue) or not isinstance(self.env.get(src), SSAValue):
            raise GraphUnsupported("copy_ into a graph input of a value that is not a tensor")
        b = self.b
        value = b.expand(b.convert(self.env[src], b.dtype(self.env[dst])), dst.meta["val"].shape)
        self.writes[self.input_index[dst]] = value
        self.env[node] = self.env[dst] = value
        self.imported[overload_name(node.target)] += 1

    def _sym(self, node, val) -> SSAValue:
        try:
            return self.symbols.value(val)
        except Unsupported as e:
            raise GraphUnsupported(str(e)) from None

    def _check(self, node: torch.fx.Node, out) -> None:
        """An importer must produce exactly the types FX recorded; anything else is an irc bug."""
        vals = node.meta["val"]
        pairs = zip(out, vals) if isinstance(vals, (list, tuple)) else [(out, vals)]
        for v, meta in pairs:
            if v is None or meta is None:
                continue
            want = self.b.type_of(meta)
            if not isinstance(v, SSAValue) or v.type != want:
                got = v.type if isinstance(v, SSAValue) else v
                raise AssertionError(f"importer of {node.target} built {got}, FX says {want} (node {node.name})")

    def _with_effects(self, node: torch.fx.Node) -> None:
        """with_effects(token, op, *args): AOT autograd's ordering of an op with side effects (frontend/effects.py).
        The op imports as its typed op with effects, or runs eagerly in its place; the token passes through."""
        token, op, *args = node.args
        if not isinstance(op, OpOverload):
            raise GraphUnsupported(f"with_effects of {op}")
        if (out := import_effect(self, node)) is None:
            _, *vals = node.meta["val"]
            out = self._call_eagerly(
                op, tuple(args), node.kwargs, tuple(vals), "an op with side effects (with_effects)"
            )
        self.env[node] = (self.env[token], *out)

    def _fallback(self, node: torch.fx.Node, reason: str) -> None:
        out = self._call_eagerly(node.target, node.args, node.kwargs, node.meta.get("val"), reason)
        self.env[node] = out

    def _call_eagerly(self, target: OpOverload, args, kwargs, val, reason: str):
        """A tn.aten_call of `target` (FX's args, kwargs and meta `val`); its results shaped as `val`."""
        if target in DATA_DEPENDENT_SHAPES:
            raise GraphUnsupported(f"{target} returns tensors whose sizes depend on the data")
        operands: list[SSAValue] = []

        def operand_of(n: torch.fx.Node):
            v = self.env[n]
            if isinstance(v, (int, float, bool)) or v is None:
                return v
            if isinstance(v, (list, tuple)):
                raise GraphUnsupported(f"{target} takes a multi-result value as one argument")
            operands.append(v)
            return {"t": len(operands) - 1}

        try:
            template = encode_args(args, kwargs, operand_of)
        except CannotEncode as e:
            raise GraphUnsupported(str(e)) from None
        leaves, spec = tree_flatten(val)
        if any(not isinstance(x, torch.Tensor) and x is not None for x in leaves):
            raise GraphUnsupported(f"{target} returns non-tensor values")
        try:
            types = [self.b.type_of(x) for x in leaves if x is not None]
        except UnsupportedDtype as e:
            raise GraphUnsupported(str(e)) from None
        name = overload_name(target)
        op = self.b.insert(tn.AtenCallOp(name, template, reason, operands, types))
        results = iter(op.results)
        flat = [next(results) if x is not None else None for x in leaves]
        out = spec.unflatten(flat)
        self.fallbacks.append(Fallback(name, reason))
        return tuple(out) if isinstance(out, list) else out


def _name(s: str) -> str:
    return s if s[:1].isalpha() else f"v{s}"


def import_graph(gm: torch.fx.GraphModule, eager_ops: frozenset[str] = frozenset()) -> ImportResult:
    return GraphImporter(gm, eager_ops).run()
