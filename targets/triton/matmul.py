"""Matrix products as a tl.dot template (options={"matmul": "dot"}), with the pointwise kernel after them fused.

A `mem.extern` whose region is one `tn.mm` or `tn.bmm` of its two ins (f32, f16 or bf16) runs as a
blocked tl.dot kernel: one program per BLOCK_M x BLOCK_N tile of the product (and per batch), a loop
over K in BLOCK_K steps, accumulating in f32. When the next launch of @main is a pointwise kernel over exactly the product's
space that reads it only at (d0, d1), and nothing else reads the product, that kernel's body becomes
the template's epilogue (bias, activation, residual, several outputs): the tile goes from registers
to its consumers' outputs and the product is never written. Nothing that runs may lie between the two
(the extern's operands must still hold their values when the fused kernel runs); the runtime also
checks that the epilogue writes no operand of the product.
"""

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, ModuleOp
from xdsl.ir.affine import AffineDimExpr

from irc.dialects import loop, memory
from irc.dialects import tensor as tn

from .prelude import PRELUDE
from .source import _Gen
from .types import Unsupported, compute_type, pointer_type, rounded, storage_type, stored

_NON_EXECUTING = (
    memory.DimOp,
    memory.AllocOp,
    memory.SlotOp,
    memory.ViewOp,
    memory.ReshapeOp,
    memory.ArenaOp,
    arith.ConstantOp,
)


@dataclass
class DotPlan:
    """One mm extern and, when fusable, the launch whose kernel becomes its epilogue."""

    extern: memory.ExternOp
    launch: memory.LaunchOp | None
    epilogue: func.FuncOp | None
    operand: int | None  # which argument of the epilogue kernel is the product


def _is_mm(op: memory.ExternOp) -> bool:
    block = op.body.block
    ops = list(block.ops)
    if (
        len(ops) != 2
        or not isinstance(ops[0], tn.MmOp | tn.BmmOp)
        or len(op.ins) != 2
        or len(op.outs) + len(op.res) != 1
    ):
        return False
    mm = ops[0]
    if list(mm.operands) != list(block.args):
        return False
    return isinstance(mm.result.type.get_element_type(), Float32Type | Float16Type | BFloat16Type)


def _epilogue_of(main_ops: list, i: int, product, kernels: dict):
    """(launch, kernel, operand index) when the launch right after main_ops[i] can be fused, else None."""
    uses = [u.operation for u in product.uses if u.operation is not main_ops[i]]
    nxt = next((o for o in main_ops[i + 1 :] if not isinstance(o, _NON_EXECUTING)), None)
    if not isinstance(nxt, memory.LaunchOp) or any(u is not nxt and not isinstance(u, memory.DimOp) for u in uses):
        return None
    if list(nxt.ins).count(product) != 1 or product in nxt.outs:
        return None
    fn = kernels.get(nxt.callee.root_reference.data)
    if fn is None:
        return None
    nest = next(o for o in fn.body.block.ops if isinstance(o, loop.NestOp))
    k = list(nxt.ins).index(product)
    param = fn.body.block.args[k]
    rank = len(product.type.get_shape())
    if nest.rank != rank or nest.reduction_dims():
        return None
    identity = [AffineDimExpr(d) for d in range(rank)]
    if any(list(ld.map.data.results) != identity for ld in nest.loads() if ld.source is param):
        return None
    if any(ld.indices and ld.source is param for ld in nest.loads()):
        return None
    return nxt, fn, k


def plan_dots(module: ModuleOp, entry: str = "main") -> list[DotPlan]:
    funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    main_ops = list(funcs[entry].body.block.ops)
    plans = []
    for i, op in enumerate(main_ops):
        if isinstance(op, memory.ExternOp) and _is_mm(op):
            product = op.outs[0] if op.outs else op.res[0]
            fused = _epilogue_of(main_ops, i, product, funcs)
            plans.append(DotPlan(op, *(fused or (None, None, None))))
    return plans


class _Epilogue(_Gen):
    """The epilogue kernel's body over one [BLOCK_M, BLOCK_N] tile; the product's loads read the accumulator."""

    def __init__(self, fn: func.FuncOp, operand: int, batched: bool):
        super().__init__(fn)
        self.product = fn.body.block.args[operand]
        self.unit = "[1, 1]"
        self.tile_2d = ("d1", "d2") if batched else ("d0", "d1")  # the rows and columns of the tile

    def shape(self, groups) -> str:
        return "[BLOCK_M, BLOCK_N]"

    def value(self, op, env) -> str:
        if isinstance(op, loop.LoadOp) and op.source is self.product:
            return "acc_t"
        return super().value(op, env)


def dot_source(
    name: str, elem, epilogue: func.FuncOp | None = None, operand: int | None = None, batched: bool = False
) -> tuple[str, list, dict]:
    """(kernel text, params of the epilogue kernel, signature types of the arguments but the block sizes) for the
    template `name` of an mm (bmm when `batched`) of `elem`. The product's dims are the epilogue's: d0, d1 (mm) or
    d0 (batch), d1, d2 (bmm)."""
    r = 3 if batched else 2
    sig = [f"{t}{x}" for t in ("a", "b") for x in ("", *(f"_n{k}" for k in range(r)), *(f"_s{k}" for k in range(r)))]
    gen = _Epilogue(epilogue, operand, batched) if epilogue is not None else None
    if gen is None:
        sig += ["c", *(f"c_n{k}" for k in range(r)), *(f"c_s{k}" for k in range(r))]
    else:
        sig += gen.signature[:-4]  # its buffers and symbols, not its block arguments
    own = {"a": pointer_type(elem), "b": pointer_type(elem), "c": pointer_type(elem)} | (gen.arg_types if gen else {})
    arg_types = {n: own.get(n, "i64") for n in [*sig, "M", "N", "K"]}  # sizes and strides are i64
    sig += ["M", "N", "K", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr"]
    precision = ', input_precision="ieee"' if isinstance(elem, Float32Type) else ""  # f32 stays f32 (no tf32)
    m, n = ("d1", "d2") if batched else ("d0", "d1")
    ab = "d0 * a_s0 + " if batched else ""
    bb = "d0 * b_s0 + " if batched else ""
    a1, a2, b1, b2 = ("a_s1", "a_s2", "b_s1", "b_s2") if batched else ("a_s0", "a_s1", "b_s0", "b_s1")
    ind = "    "
    lines = ["@triton.jit", f"def {name}({', '.join(sig)}):"]
    if batched:
        lines.append(f"{ind}d0 = tl.full([1, 1], 0, tl.int64) + tl.program_id(2)  # the batch")
    lines += [
        f"{ind}{m} = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
        f"{ind}{n} = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]",
        f"{ind}xmask = ({m} < M) & ({n} < N)",
        f"{ind}acc = tl.full([BLOCK_M, BLOCK_N], 0, tl.float32)",
        f"{ind}for k0 in range(0, K, BLOCK_K):",
        f"{ind}    rk = k0 + tl.arange(0, BLOCK_K)",
        f"{ind}    at = tl.load(a + {ab}{m} * {a1} + rk[None, :] * {a2}, mask=({m} < M) & (rk[None, :] < K), other=0)",
        f"{ind}    bt = tl.load(b + {bb}rk[:, None] * {b1} + {n} * {b2}, mask=(rk[:, None] < K) & ({n} < N), other=0)",
        f"{ind}    acc += tl.dot(at, bt{precision})",
    ]
    s, c = storage_type(elem), compute_type(elem)
    lines.append(
        f"{ind}acc_t = acc" if s == c else f"{ind}acc_t = {rounded('acc', s, c)}  # the product's own precision"
    )
    if gen is None:
        cb = "d0 * c_s0 + " if batched else ""
        c1, c2 = ("c_s1", "c_s2") if batched else ("c_s0", "c_s1")
        lines.append(f"{ind}tl.store(c + {cb}{m} * {c1} + {n} * {c2}, {stored('acc_t', s, c)}, mask=xmask)")
        return "\n".join(lines) + "\n", [], arg_types
    env: dict = {}
    values = list(gen.nest.yield_op.values)
    gen.emit_ops(lines, ind, env, gen._needed(values, through_reductions=True), "")
    for i, v in enumerate(values):
        gen.store(lines, ind, i, v, env)
    return "\n".join(lines) + "\n", gen.params, arg_types


@dataclass
class DotKernel:
    """A generated template: its name, its source (with the prelude) and the epilogue's parameter kinds."""

    name: str
    kernel: str
    params: list
    arg_types: dict[str, str]  # every argument but the block sizes -> its Triton signature type
    batched: bool = False

    @property
    def text(self) -> str:
        return PRELUDE + "\n\n" + self.kernel


def dot_kernel(plan: DotPlan, index: int) -> DotKernel:
    mm = next(iter(plan.extern.body.block.ops))
    elem = mm.result.type.get_element_type()
    batched = isinstance(mm, tn.BmmOp)
    base = f"bmm{index}" if batched else f"mm{index}"
    name = base if plan.epilogue is None else f"{base}_{plan.epilogue.sym_name.data}"
    try:
        text, params, arg_types = dot_source(name, elem, plan.epilogue, plan.operand, batched)
    except Unsupported:
        if plan.epilogue is None:
            raise
        plan.launch = plan.epilogue = plan.operand = None  # the epilogue stays a kernel of its own
        text, params, arg_types = dot_source(base, elem, batched=batched)
        name = base
    return DotKernel(name, text, params, arg_types, batched)
