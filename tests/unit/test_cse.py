"""irc.ir.cse: the same eliminations as xDSL's CSE, with nests keyed by their bodies (issue 16: compile time)."""

from xdsl.transforms.common_subexpression_elimination import cse as xdsl_cse

from irc.bench.compile_scaling import capture
from irc.dialects import ALL_DIALECTS, loop
from irc.frontend.fx_import import import_graph
from irc.ir import make_context, parse_module, print_module, run_passes
from irc.ir.cse import cse
from irc.lowering import pipeline
from irc.lowering.fusion.fuse import FuseLoopsPass
from irc.lowering.tensor_to_loop import TensorToLoopPass


def body(load_of: str, op: str) -> str:
    return (
        f"    %0 = loop.load %{load_of}[affine_map<(d0) -> (d0)>] : tensor<8xf32> -> f32\n"
        f"    %1 = {op} %0 : f32\n    loop.yield %1 : f32\n"
    )


def nest(name: str, load_of: str, op: str) -> str:
    return f'  %{name} = loop.nest space = affine_map<() -> (8)> iterators = ["parallel"] : tensor<8xf32> {{\n{body(load_of, op)}  }}\n'


def module(*nests: str, ret: str):
    text = f"func.func @f(%x: tensor<8xf32>, %y: tensor<8xf32>) -> ({', '.join(['tensor<8xf32>'] * len(ret.split(',')))}) {{\n"
    text += "".join(nests) + f"  func.return {ret} : {', '.join(['tensor<8xf32>'] * len(ret.split(',')))}\n}}"
    m = parse_module(make_context(ALL_DIALECTS), text)
    m.verify()
    return m


def nests_of(m) -> list[loop.NestOp]:
    return [op for op in m.walk() if isinstance(op, loop.NestOp)]


def test_equal_nests_merge_and_nests_over_one_space_with_other_bodies_stay():
    m = module(
        nest("a", "x", "math.exp"),
        nest("b", "x", "math.exp"),
        nest("c", "y", "math.exp"),
        nest("d", "x", "math.tanh"),
        ret="%a, %b, %c, %d",
    )
    cse(m)
    m.verify()
    kept = nests_of(m)
    assert len(kept) == 3
    ret = m.body.block.first_op.body.block.last_op
    assert ret.operands[0] is ret.operands[1]  # %b became %a
    assert len({ret.operands[0], ret.operands[2], ret.operands[3]}) == 3


def loop_stage_before_simplify() -> list[str]:
    """A ResNet block's train step (forward and backward) at the loop stage, fused but not yet simplified: CSE
    has work inside bodies and out."""
    texts = []
    for _, gm in capture("conv-train", 1):
        m = import_graph(gm).module
        pipeline.run(m, stop="tensor-opt")
        run_passes(make_context(ALL_DIALECTS), m, (TensorToLoopPass(), FuseLoopsPass()))
        texts.append(print_module(m))
    return texts


def test_the_same_module_as_xdsls_cse_on_a_train_step():
    for text in loop_stage_before_simplify():
        ours, theirs = (parse_module(make_context(ALL_DIALECTS), text) for _ in range(2))
        cse(ours)
        xdsl_cse(theirs)
        assert print_module(ours) == print_module(theirs)
        assert print_module(ours) != text  # it had something to eliminate


def _kernel(name: str, op: str, width: int = 8, index: str = "d0", arg: str = "a") -> str:
    """A bufferized kernel: one nest reading its first buffer and writing its second."""
    return (
        f"func.func @{name}(%{arg}: memref<{width}xf32>, %o: memref<{width}xf32>) {{\n"
        f'  loop.nest space = affine_map<() -> ({width})> iterators = ["parallel"] outs(%o : memref<{width}xf32>) {{\n'
        f"    %v = loop.load %{arg}[affine_map<(d0) -> ({index})>] : memref<{width}xf32> -> f32\n"
        f"    %r = {op} %v : f32\n    loop.yield %r : f32\n  }}\n  func.return\n}}\n"
    )


def test_structural_key_names_a_kernel_up_to_its_value_names():
    """bufferize shares kernels by structural_key (their printed text before): the same program under other value
    names is one key; another op, size, index map or operand is another."""
    from irc.ir.cse import structural_key

    def key(text: str):
        (f,) = parse_module(make_context(ALL_DIALECTS), text).ops
        return structural_key(f)

    base = key(_kernel("kernel", "math.exp"))
    assert key(_kernel("kernel", "math.exp", arg="input")) == base
    assert all(
        key(k) != base
        for k in (
            _kernel("kernel", "math.tanh"),
            _kernel("kernel", "math.exp", width=9),
            _kernel("kernel", "math.exp", index="7 - d0"),
            _kernel("other", "math.exp"),
        )
    )
