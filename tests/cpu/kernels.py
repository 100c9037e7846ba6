"""Small hand-built llvmlite kernels shared by the CPU target tests."""

from llvmlite import ir

F32 = ir.FloatType()
I64 = ir.IntType(64)


def range_loop(fn, start, end, body):
    """Emit `for i in [start, end): body(builder, i)` into fn's current end; returns the builder after it."""
    entry = fn.append_basic_block("entry")
    head, loop, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, "i")
    i.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", i, end), loop, done)
    b.position_at_end(loop)
    body(b, i)
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
    b.branch(head)
    b.position_at_end(done)
    return b


def square_plus(m: ir.Module, name: str = "k", c: float = 1.0):
    """void name(i64 start, i64 end, float* x): x[i] = x[i]*x[i] + c."""
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, I64, F32.as_pointer()]), name)
    s, e, p = fn.args

    def body(b, i):
        q = b.gep(p, [i])
        v = b.load(q)
        b.store(b.fadd(b.fmul(v, v), ir.Constant(F32, c)), q)

    range_loop(fn, s, e, body).ret_void()
    return fn


def map_kernel(m: ir.Module, name: str, fn, nin: int = 1, lanes: int = 16, elem=F32):
    """void name(i64 n, elem* out, elem* in0, ...): out[i] = fn(b, in0[i], ...).

    A `lanes`-wide vector loop over the bulk and a scalar loop over the tail, as generated kernels do,
    so both widths of each math builder run."""
    p = elem.as_pointer()
    f = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64, p] + [p] * nin), name)
    n, out, *ins = f.args
    vty = ir.VectorType(elem, lanes)

    def vec_body(b, j):
        i = b.mul(j, ir.Constant(I64, lanes))
        args = [b.load(b.bitcast(b.gep(q, [i]), vty.as_pointer()), align=4) for q in ins]
        b.store(fn(b, *args), b.bitcast(b.gep(out, [i]), vty.as_pointer()), align=4)

    def scalar_body(b, i):
        b.store(fn(b, *[b.load(b.gep(q, [i])) for q in ins]), b.gep(out, [i]))

    # vector loop over j in [0, n / lanes), then the scalar loop from the first uncovered element
    pre = f.append_basic_block("pre")
    b = ir.IRBuilder(pre)
    nvec = b.sdiv(n, ir.Constant(I64, lanes))
    b = _loop(f, b, ir.Constant(I64, 0), nvec, vec_body)
    b = _loop(f, b, b.mul(nvec, ir.Constant(I64, lanes)), n, scalar_body)
    b.ret_void()
    return f


def _loop(f, b, start, end, body):
    """Append `for i in [start, end)` after the builder's current block; returns a builder past the loop."""
    head, loop, done = (f.append_basic_block(x) for x in ("head", "body", "done"))
    before = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(start, before)
    b.cbranch(b.icmp_signed("<", i, end), loop, done)
    b.position_at_end(loop)
    body(b, i)
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
    b.branch(head)
    b.position_at_end(done)
    return b
