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
