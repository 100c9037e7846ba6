"""Per-pass result checking: run the IR before and after a pass on the same random inputs and compare.

`ResultCheck(run)` is an Instrument. `run(module, entry, args) -> outputs` executes a function of a
module (the reference executors do, at every stage). Around each pass the check runs every entry
function (one no other op references) of the module before and of the module after on the same
inputs, drawn from the function's signature with a seeded generator: float tensors from a normal
distribution, integers in {1, 2}, booleans, and one small size (5 to 8) shared by every `?` dim and
every `index` argument (so sizes bound to the same symbol agree). Where the module computes in f32 alone,
both modules run widened to f64 (`widen_f32`), so a real change stands out of rounding noise;
otherwise they run as they are, compared with tolerances for their element types. The first pass
whose result differs raises ResultMismatch, which names the pass and carries the IR before it
and the seed: everything a reproducer needs.
"""

from collections.abc import Callable, Sequence

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float32Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    f64,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.passes import ModulePass

from .compare import TOLERANCES, WIDENED_F32, Tolerances, compare
from .passes import Instrument, pass_label
from .text import print_module
from .types import FLOAT_TYPES, torch_dtype

Runner = Callable[[ModuleOp, str, list], Sequence]


class ResultMismatch(Exception):
    """A pass changed what the program computes (or made it fail to run)."""

    def __init__(self, p: ModulePass, entry: str, reason: str, before: str, seed: int):
        super().__init__(f"pass '{pass_label(p)}' changed the result of @{entry}: {reason}")
        self.pass_ = p
        self.entry, self.reason, self.before, self.seed = entry, reason, before, seed


# -- inputs --------------------------------------------------------------------------------------


def dynamic_size(seed: int) -> int:
    """The size every `?` dim and `index` argument gets for this seed: 5 to 8 (programs often assume a few elements)."""
    return 5 + seed % 4


def random_tensor(shape: Sequence[int], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Normal floats, booleans, or integers in {1, 2} (never a zero divisor; an index into any dim of 3 or more)."""
    if dtype.is_floating_point:
        return torch.randn(list(shape), generator=gen, dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        return torch.rand(list(shape), generator=gen) < 0.5
    if dtype.is_complex:
        return torch.randn(list(shape), generator=gen, dtype=torch.complex128).to(dtype)
    return torch.randint(1, 3, list(shape), generator=gen).to(dtype)


def random_value(t: Attribute, gen: torch.Generator, size: int):
    if isinstance(t, IndexType):
        return size
    if isinstance(t, (TensorType, MemRefType)):
        shape = [size if d < 0 else d for d in t.get_shape()]
        element = t.get_element_type()
    elif isinstance(t, (IntegerType, *FLOAT_TYPES)):
        shape, element = [], t
    else:
        raise TypeError(f"no random value for an argument of type {t}")
    return random_tensor(shape, torch_dtype(element), gen)


def random_args(fn: func.FuncOp, seed: int, given: Sequence = ()) -> list:
    """Arguments for `fn`: `given[i]` where it is not None (cast to the argument's dtype), else random."""
    gen = torch.Generator().manual_seed(seed)
    size = dynamic_size(seed)
    args = []
    for i, t in enumerate(fn.function_type.inputs):
        v = random_value(t, gen, size)  # drawn even when given, so the other draws do not depend on `given`
        g = given[i] if i < len(given) else None
        if g is not None:
            v = g.to(v.dtype).clone() if isinstance(g, torch.Tensor) and isinstance(v, torch.Tensor) else g
        args.append(v)
    return args


# -- widening f32 to f64 ---------------------------------------------------------------------------


def _widen(a: Attribute) -> Attribute:
    if isinstance(a, Float32Type):
        return f64
    if isinstance(a, DenseIntOrFPElementsAttr):
        t = _widen(a.type)
        return a if t == a.type else DenseIntOrFPElementsAttr.from_list(t, a.get_values())
    if isinstance(a, DenseArrayBase):
        t = _widen(a.elt_type)
        return a if t == a.elt_type else DenseArrayBase.from_list(t, a.get_values())
    if isinstance(a, ArrayAttr):
        items = tuple(_widen(x) for x in a.data)
        return a if items == a.data else ArrayAttr(items)
    if isinstance(a, DictionaryAttr):
        items = {k: _widen(v) for k, v in a.data.items()}
        return a if items == a.data else DictionaryAttr(items)
    if isinstance(a, ParametrizedAttribute):
        params = [_widen(p) for p in a.parameters]
        return a if params == list(a.parameters) else type(a).new(params)
    return a


def _float_types(module: ModuleOp) -> set[Attribute]:
    found: set[Attribute] = set()
    for op in module.walk():
        values = [*op.results, *(arg for r in op.regions for b in r.blocks for arg in b.args)]
        for v in values:
            t = v.type
            element = t.get_element_type() if isinstance(t, (TensorType, MemRefType)) else t
            if isinstance(element, FLOAT_TYPES):
                found.add(element)
    return found


def widen_f32(module: ModuleOp, keep: Callable[[Operation], bool] = lambda op: False) -> ModuleOp | None:
    """A copy of `module` computing in f64 wherever it computes in f32, or None where that could change
    its meaning: another float type (f16, bf16, f64) appears, an op `keep`s its precision (byte-level
    storage, bitcasts, eager calls), or the widened copy does not verify."""
    if {type(t) for t in _float_types(module)} != {Float32Type} or any(keep(op) for op in module.walk()):
        return None
    wide = module.clone()
    for op in wide.walk():
        for attrs in (op.properties, op.attributes):
            for k, v in list(attrs.items()):
                attrs[k] = _widen(v)
        values = [*op.results, *(arg for r in op.regions for b in r.blocks for arg in b.args)]
        for v in values:
            v._type = _widen(v.type)  # a throwaway copy: retyping in place is simpler than rebuilding every op
    try:
        wide.verify()
    except Exception:
        return None
    return wide


# -- running and comparing -----------------------------------------------------------------------


def entry_points(module: ModuleOp) -> list[str]:
    """Functions with a body that no op of the module refers to (kernels and callees are not entries)."""
    referenced = set()
    for op in module.walk():
        for a in (*op.properties.values(), *op.attributes.values()):
            if isinstance(a, SymbolRefAttr):
                referenced.add(a.root_reference.data)
    return [
        op.sym_name.data
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and op.sym_name.data not in referenced
    ]


def _function(module: ModuleOp, name: str) -> func.FuncOp | None:
    return next((op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name), None)


def _leaves(outs) -> list:
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in outs]


class ResultCheck(Instrument):
    """Raise ResultMismatch after the first pass whose module computes something else than the module before it."""

    def __init__(
        self, run: Runner, *, seed: int = 0, given: Sequence = (), keep: Callable[[Operation], bool] = lambda op: False
    ):
        self.run, self.seed, self.given, self.keep = run, seed, list(given), keep
        self.unchecked: list[tuple[str, str, str]] = []  # (pass, entry, why) for what could not be checked
        self.checked: list[str] = []  # the passes checked on every entry function
        self._before: ModuleOp | None = None

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        self._before = module.clone()

    def failed(self, p: ModulePass, module: ModuleOp, error: Exception) -> None:
        self._before = None

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        before, self._before = self._before, None
        if before is None:
            return
        if before.is_structurally_equivalent(module):  # the pass changed nothing: it computes what it did
            self.checked.append(p.name)
            return
        unchecked = len(self.unchecked)
        for entry in entry_points(before):
            reason = self.check(before, module, entry, p.name)
            if reason is not None:
                raise ResultMismatch(p, entry, reason, print_module(before), self.seed)
        if len(self.unchecked) == unchecked:
            self.checked.append(p.name)

    def check(self, before: ModuleOp, after: ModuleOp, entry: str, name: str) -> str | None:
        if _function(after, entry) is None:
            return "the function is gone"
        wide = (widen_f32(before, self.keep), widen_f32(after, self.keep))
        if None not in wide:
            try:
                return self._compare(*wide, entry, " (run in f64)", WIDENED_F32)
            except _CannotRun:
                pass  # the widened program does not run (an op insists on its dtype): run it as it is
        try:
            return self._compare(before, after, entry, "", TOLERANCES)
        except _CannotRun as e:
            self.unchecked.append((name, entry, str(e)))
            return None

    def _compare(self, before: ModuleOp, after: ModuleOp, entry: str, how: str, tolerances: Tolerances) -> str | None:
        from torch._subclasses.fake_tensor import unset_fake_temporarily

        with unset_fake_temporarily():  # a backend compiles under FakeTensorMode; the check needs real tensors
            return self._compare_real(before, after, entry, how, tolerances)

    def _compare_real(
        self, before: ModuleOp, after: ModuleOp, entry: str, how: str, tolerances: Tolerances
    ) -> str | None:
        fb, fa = _function(before, entry), _function(after, entry)
        if len(fb.function_type.inputs) != len(fa.function_type.inputs):
            return f"it takes {len(fa.function_type.inputs)} arguments instead of {len(fb.function_type.inputs)}"
        try:
            args = random_args(fb, self.seed, self.given)
            want = self._run(before, entry, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        except Exception as e:
            raise _CannotRun(f"{type(e).__name__}: {e}") from e
        try:
            got = self._run(after, entry, args)
        except Exception as e:
            if how:
                raise _CannotRun(str(e)) from e
            return f"it raises {type(e).__name__}: {e} (the IR before the pass runs)"
        reason = compare(want, got, tolerances=tolerances)
        return None if reason is None else reason + how

    def _run(self, module: ModuleOp, entry: str, args: list) -> list:
        with torch.random.fork_rng(devices=[]):  # random ops (tn.rand) draw the same numbers before and after
            torch.manual_seed(self.seed)
            return _leaves(self.run(module, entry, args))


class _CannotRun(Exception):
    pass
