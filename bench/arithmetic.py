"""The arithmetic bound of a generated kernel (bench/roofline.py): the vector instructions its body must issue,
over the most vector instructions a core issues per second.

A kernel whose body computes transcendentals (softmax's exp, a tanh chain) can be bound by arithmetic, not by
the bytes it moves: exp is 17 instructions per vector in irc's math library, and 2M exps on 16 lanes take longer
than copying their 8 MB from the caches. Its bound is then the larger of the two.

    ops = kernel_ops(g, step, vals)      # vector instructions of one launch (its loads and stores aside)
    rate = vector_rate()                 # independent vector ops per second on one thread, measured here

Each op of the body that runs at every point (one that reads a load or an index, directly or through others,
reductions included) counts once per point, its vector holding `lanes` points: what any schedule must compute
(irc's passes recompute cheap values, which the bound does not count). A math function counts the instructions
irc's math library emits for it (targets/cpu/codegen/mathlib.py); every other op one. Values of a row's reductions
alone (softmax's 1 / sum) are per row, not counted. The rate is the best of loops of independent FMAs, FMAs
beside adds, and multiplies beside adds: what a core's vector pipes issue when nothing waits.
"""

from __future__ import annotations

import ctypes
import functools
import time

from llvmlite import ir
from xdsl.dialects.builtin import AnyFloat, IntegerType

from irc.dialects import loop

FREE = ("loop.load", "loop.yield", "loop.index", "arith.constant")
CHAINS = 12  # independent accumulators: more than latency x pipes (4 cycles x 2 pipes) needs


@functools.cache
def math_cost(name: str, lanes: int = 16) -> int:
    """Instructions irc's math library emits for `name` (exp, tanh, ...) on one vector; 1 for an op it does not
    provide (a single instruction: sqrt, fma, ...)."""
    from irc.targets.cpu.codegen.mathlib import FUNCTIONS

    fn = FUNCTIONS.get(name)
    if fn is None:
        return 1
    vec = ir.VectorType(ir.FloatType(), lanes)
    f = ir.Function(ir.Module(), ir.FunctionType(vec, [vec, vec]), "f")
    b = ir.IRBuilder(f.append_basic_block())
    b.ret(fn(b, *f.args) if name == "pow" else fn(b, f.args[0]))
    moves = ("bitcast", "shufflevector", "extractelement", "insertelement", "ret", "br")
    return sum(1 for blk in f.blocks for i in blk.instructions if i.opname not in moves)


def per_point_ops(nest: loop.NestOp) -> list:
    """The body's ops that run at every point: those reading a load or an index of a dim (through others too). A
    reduction combines at every point; its result is one value per row."""
    varying, out = set(), []
    for op in nest.body.block.ops:
        moves = isinstance(op, loop.LoadOp) or isinstance(op, loop.IndexOp) and op.map.data.results[0].used_dims()
        if moves or any(o.owner in varying for o in op.operands):
            if not isinstance(op, loop.ReduceOp):
                varying.add(op)
            if op.name not in FREE:
                out.append(op)
    return out


def point_cost(nest: loop.NestOp, lanes: int) -> float:
    """Vector instructions per point: each op's cost over the points one vector of its type holds."""
    total = 0.0
    for op in per_point_ops(nest):
        per_vector = max(1, lanes * 32 // max(32, _bits(op.results[0].type if op.results else op.operands[0].type)))
        cost = math_cost(op.name.removeprefix("math."), lanes) if op.name.startswith("math.") else 1
        total += cost / per_vector
    return total


def _bits(t) -> int:
    """Bits of a scalar type (an index counts as 64; narrow floats compute in 32)."""
    if isinstance(t, IntegerType):
        return t.width.data
    return t.bitwidth if isinstance(t, AnyFloat) else 64


def kernel_ops(g, st, vals=(), lanes: int | None = None) -> float:
    """Vector instructions one launch issues at least (its points x point_cost)."""
    from irc.targets.cpu.runtime import jit

    from .bounds import _points, _size

    nest = g.kernels[st.op.callee.root_reference.data]
    points = _points(nest, [_size(s, vals) for s in st.syms])
    return (points or 0) * point_cost(nest, lanes or jit.host().lanes(32))


def _mix_module(lanes: int) -> ir.Module:
    """Functions `void <mix>(i64 n, float* out)`: n steps of CHAINS independent vector ops, the sums stored."""
    vec = ir.VectorType(ir.FloatType(), lanes)
    m = ir.Module()
    fma = ir.Function(m, ir.FunctionType(vec, [vec, vec, vec]), "llvm.fma.v%df32" % lanes)
    one = ir.Constant(vec, [ir.Constant(ir.FloatType(), 1.0000001)] * lanes)
    tiny = ir.Constant(vec, [ir.Constant(ir.FloatType(), 1e-9)] * lanes)
    kinds = {"fma": ["fma"], "fma+add": ["fma", "add"], "mul+add": ["mul", "add"]}
    for name, mix in kinds.items():
        f = ir.Function(m, ir.FunctionType(ir.VoidType(), [ir.IntType(64), vec.as_pointer()]), name.replace("+", "_"))
        entry, body, done = (f.append_basic_block(s) for s in ("entry", "body", "done"))
        b = ir.IRBuilder(entry)
        b.branch(body)
        b.position_at_end(body)
        i = b.phi(ir.IntType(64))
        accs = [b.phi(vec) for _ in range(CHAINS)]
        new = []
        for k, a in enumerate(accs):
            kind = mix[k % len(mix)]
            new.append(
                b.call(fma, [a, one, tiny]) if kind == "fma" else b.fmul(a, one) if kind == "mul" else b.fadd(a, tiny)
            )
        nxt = b.add(i, ir.Constant(ir.IntType(64), 1))
        b.cbranch(b.icmp_signed("<", nxt, f.args[0]), body, done)
        i.add_incoming(ir.Constant(ir.IntType(64), 0), entry)
        i.add_incoming(nxt, body)
        for a, v in zip(accs, new):
            a.add_incoming(one, entry)
            a.add_incoming(v, body)
        b.position_at_end(done)
        total = new[0]
        for v in new[1:]:
            total = b.fadd(total, v)
        b.store(total, f.args[1], align=4)  # a ctypes array: no vector alignment
        b.ret_void()
    return m


@functools.cache
def vector_rate(lanes: int | None = None, steps: int = 1 << 20) -> float:
    """Independent vector ops per second on one thread: the best of the mixes, each the best of 5 runs."""
    from irc.targets.cpu.runtime import jit

    lanes = lanes or jit.host().lanes(32)
    compiled = jit.compile_module(_mix_module(lanes), use_cache=False)
    out = (ctypes.c_float * lanes)()
    best = 0.0
    for name in ("fma", "fma_add", "mul_add"):
        fn = compiled.function(name, None, ctypes.c_int64, ctypes.c_void_p)
        fn(1024, ctypes.addressof(out))
        for _ in range(5):
            t0 = time.perf_counter()
            fn(steps, ctypes.addressof(out))
            best = max(best, steps * CHAINS / (time.perf_counter() - t0))
    return best


__all__ = ["kernel_ops", "math_cost", "per_point_ops", "point_cost", "vector_rate"]
