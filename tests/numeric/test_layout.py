"""Each layout choice (options={"layout": "nchw" | "nhwc" | "auto"}) computes what eager computes: the
ConvNet and ResNet-18 demo models in eval mode, convolution blocks with odd sizes, strides, groups and
dilation, non-contiguous and channels-last inputs, a dynamic batch, and a ConvNet training step."""

import pytest
import torch
import torch.nn.functional as F

import irc
from irc.bench import models as M
from irc.bench.check import (
    FORWARD_TOL,
    assert_close,
    compare_steps,
    loss_fn,
    targets_for,
    train_step,
    twin,
)
from tests.conftest import compile_irc

LAYOUTS = ("nchw", "nhwc", "auto")


def _layouts(report) -> list[str]:
    return [note.split(": ")[1] for g in report.graphs for note in g.layouts]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["convnet", "resnet18"])
def test_eval_model_matches_eager(name, layout):
    model, inputs = M.convnet(batch=2) if name == "convnet" else M.resnet18(batch=2, size=32)
    model.eval()
    with torch.no_grad():
        want = model(*inputs)
        got = compile_irc(twin(model), layout=layout)(*inputs)
        report = irc.explain(twin(model), *inputs, options={"layout": layout, "strict": True})
    assert_close("forward output", got, want, FORWARD_TOL)
    chosen = _layouts(report)
    assert chosen and (layout == "auto" or set(chosen) == {layout}), chosen
    assert all(not g.target_fallbacks for g in report.graphs), [g.target_fallbacks for g in report.graphs]


def block(x, w1, b1, w2, scale, shift):
    """conv (strided, dilated) - affine - relu - grouped conv - residual add of a pooled input - sigmoid gate."""
    y = F.conv2d(x, w1, b1, stride=2, padding=2, dilation=2)
    y = torch.relu(y * scale + shift)
    z = F.conv2d(y, w2, None, padding=1, groups=2)
    return torch.sigmoid(z + y) * F.avg_pool2d(x, 2)[:, :1]


def _block_inputs(n=3, h=14, w=10):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return [r(n, 5, h, w), r(6, 5, 3, 3), r(6), r(6, 3, 3, 3), r(1, 6, 1, 1), r(1, 6, 1, 1)]


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("inputs", ["contiguous", "channels_last", "transposed"])
def test_conv_block_matches_eager(layout, inputs):
    args = _block_inputs()
    if inputs == "channels_last":
        args[0] = args[0].contiguous(memory_format=torch.channels_last)
    elif inputs == "transposed":
        args[0] = args[0].transpose(2, 3).contiguous().transpose(2, 3)  # strides of a W x H tensor
    got = compile_irc(block, layout=layout)(*args)
    torch.testing.assert_close(got, block(*args), **FORWARD_TOL)


def test_conv_block_dynamic_batch_nhwc():
    f = compile_irc(block, layout="nhwc")
    for n in (3, 5):
        args = _block_inputs(n=n)
        torch._dynamo.mark_dynamic(args[0], 0)  # one graph with a symbolic batch serves both sizes
        torch.testing.assert_close(f(*args), block(*args), **FORWARD_TOL)


def test_convnet_training_step_nhwc():
    """Loss, gradients, BatchNorm running statistics and the SGD step of a training step with NHWC regions."""
    model, inputs = M.convnet(batch=2, train=True)
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    got = train_step(mine, inputs, compile_irc(loss_fn(mine), layout="nhwc"), target, optimizer="sgd")
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    compare_steps(got, want)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_weight_changed_in_place_between_calls(layout):
    """A convolution whose weight is a graph input keeps its prepacked kernel only while that weight is unchanged."""
    fn = lambda x, w, b: torch.relu(F.conv2d(x, w, b, padding=1))  # noqa: E731
    f = compile_irc(fn, layout=layout)
    x, w, b = torch.randn(2, 4, 9, 7), torch.randn(8, 4, 3, 3), torch.randn(8)
    for _ in range(3):
        torch.testing.assert_close(f(x, w, b), fn(x, w, b), **FORWARD_TOL)
        w.mul_(-0.5)  # in-place updates (what an optimizer step does)
        b.add_(1.0)


def test_an_nhwc_region_runs_its_convolution_channels_last_even_on_an_nchw_input():
    """A region put in NHWC reads a graph input (NCHW) through a permuted view, which is the NCHW tensor itself to
    torch: the extern still runs the channels-last algorithm (before, it took the NCHW path: ResNet-18's stem at
    batch 8 ran 29 ms instead of 10)."""
    x, w = torch.randn(2, 3, 20, 20), torch.randn(8, 3, 3, 3)
    fn = lambda x, w: torch.relu(F.conv2d(x, w, padding=1))  # noqa: E731
    rep = irc.explain(fn, x, w, options={"layout": "nhwc"})
    (paths,) = [g.extern_paths for g in rep.graphs if g.extern_paths]
    ((problem, path),) = paths.items()
    assert "NHWC region" in problem and path in ("aten_cl", "mkldnn_packed"), paths
    torch.testing.assert_close(compile_irc(fn, layout="nhwc")(x, w), fn(x, w), **FORWARD_TOL)


@pytest.mark.parametrize(
    "pool",
    [
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=2, ceil_mode=True),
        dict(kernel_size=3, stride=1, dilation=2),
    ],
)
def test_max_pool_of_an_nhwc_region_pools_channels_last(pool, tmp_path):
    """A max pool reading an NHWC region's output pools it as NHWC (channels innermost; fold-permutes sinks the
    conversion below it, where it cancels against the next region's), and gives eager's values and indices
    (h * W + w), ties and NaNs included."""
    x, w1, w2 = torch.randn(2, 3, 11, 9), torch.randn(5, 3, 3, 3), torch.randn(5, 5, 1, 1)
    x[0, :, 2:5, 2:5] = 0.0  # equal maxima: the first in the window wins
    x[1, 0, 4, 4] = float("nan")

    def fn(x, w1, w2):
        y = F.conv2d(x, w1, padding=1)
        p, i = F.max_pool2d(y, return_indices=True, **pool)
        return F.conv2d(p, w2) + p, i

    irc.explain(fn, x, w1, w2, options={"layout": "nhwc", "strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/02-tensor-opt.mlir")]
    pool_line = next(line for line in text.splitlines() if "tn.max_pool2d" in line)
    assert "channels_last" in pool_line and text.count("tn.permute") == 3, text  # x in; the sum and indices out
    got, want = compile_irc(fn, layout="nhwc")(x, w1, w2), fn(x, w1, w2)
    torch.testing.assert_close(got[0], want[0], equal_nan=True, **FORWARD_TOL)
    torch.testing.assert_close(got[1], want[1])


def test_max_pool_of_a_channels_last_input_pools_it_as_nhwc(tmp_path):
    """A graph with no convolution whose input arrives channels-last: the backend records that layout on @main and
    the pool reads the input as NHWC (a view), giving eager's values, indices and channels-last strides; the same
    function on an NCHW input afterwards still gives eager's numbers."""
    x = torch.randn(2, 5, 11, 9)
    x[0, 1, 2:5, 2:5] = 0.0  # equal maxima: the first in the window wins
    x[1, 3, 4, 4] = float("nan")
    x_cl = x.contiguous(memory_format=torch.channels_last)
    fn = lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True)  # noqa: E731
    irc.explain(fn, x_cl, options={"strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/02-tensor-opt.mlir")]
    assert "irc.input_layout = [[0 : i64, 2 : i64, 3 : i64, 1 : i64]]" in text, text
    pool_line = next(line for line in text.splitlines() if "tn.max_pool2d" in line)
    assert "channels_last" in pool_line, text
    compiled = compile_irc(fn)
    for inp in (x_cl, x):
        (got, got_i), (want, want_i) = compiled(inp), fn(inp)
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(got_i, want_i)
        assert got.stride() == want.stride() and got_i.stride() == want_i.stride()


def test_an_input_with_symbolic_strides_has_no_recorded_layout_and_matches_eager():
    """A strided slice whose base has a dynamic dim arrives with symbolic strides (sizes may still be static): the
    backend records no input layout for it (there is no static one to match) and the graph matches eager, at the
    compiled size and at another. Found by irc-fuzz: the layout record negated a symbolic stride."""

    def fn(a, b):
        return torch.stack([a, b], dim=0) * 2

    def inputs(n):
        g = torch.Generator().manual_seed(n)
        b = torch.randn(2, n * 2, generator=g)[..., ::2]
        torch._dynamo.maybe_mark_dynamic(b, 1)
        return torch.randn(2, n, generator=g), b

    compiled = compile_irc(fn)
    for n in (2, 3, 5):
        torch.testing.assert_close(compiled(*inputs(n)), fn(*inputs(n)), rtol=0, atol=0)


@pytest.mark.parametrize("pool", [lambda t: F.max_pool2d(t, 3, 2, 1), lambda t: F.max_pool2d(t, 2, ceil_mode=True)])
def test_a_channels_last_pool_returned_channels_last_is_written_once(pool, tmp_path):
    """A pool of a channels-last input, returned: eager returns it channels-last, and the pool's NHWC nest is that
    layout already, so the loop stage has the one nest (output-layout leaves no copy of it) and the result has eager's
    values and strides, odd sizes and a NaN included."""
    x = torch.randn(3, 7, 13, 11)
    x[1, 2, 5, 5] = float("nan")
    x_cl = x.contiguous(memory_format=torch.channels_last)
    irc.explain(pool, x_cl, options={"strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/03-loop.mlir")]
    assert text.count("loop.nest") == 1, text
    got, want = compile_irc(pool)(x_cl), pool(x_cl)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    assert got.stride() == want.stride()


def test_an_nhwc_convolution_returned_nchw_is_copied_by_a_kernel(tmp_path):
    """An NHWC region's convolution that the graph returns where eager's result is NCHW: a generated nest copies it
    into eager's layout (not the runtime's torch copy), with eager's numbers and strides, odd sizes."""
    x, w, b = torch.randn(3, 5, 13, 7), torch.randn(6, 5, 3, 3), torch.randn(6)
    fn = lambda x, w, b: F.conv2d(x, w, b, padding=1)  # noqa: E731
    irc.explain(fn, x, w, b, options={"layout": "nhwc", "strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/03-loop.mlir")]
    assert "loop.nest" in text and "irc.output_layout = [[0 : i64, 1 : i64, 2 : i64, 3 : i64]]" in text, text
    got, want = compile_irc(fn, layout="nhwc")(x, w, b), fn(x, w, b)
    torch.testing.assert_close(got, want, **FORWARD_TOL)
    assert got.stride() == want.stride()


def test_reductions_of_an_nhwc_region_over_its_spatial_dims_match_eager(tmp_path):
    """A global average pool (and a spatial sum, max and min) of an NHWC region's output reduces the NHWC value,
    channels innermost (fold-permutes), each in one op, with eager's numbers: odd sizes, a NaN in one channel, a sum
    along a 300-long dim (each lane then adds in blocks of partial sums: targets/cpu/codegen/tuning.py CASCADE)."""
    x, w = torch.randn(2, 5, 20, 15), torch.randn(6, 5, 3, 3)
    x[1, :, 3, 2] = float("nan")
    z = torch.randn(1, 5, 2, 300)

    def fn(x, w, z):
        y = F.conv2d(x, w, padding=1)
        return (
            y.mean((2, 3)),
            y.sum((2, 3), keepdim=True),
            y.amax((2, 3)),
            F.adaptive_avg_pool2d(y, 1),
            y.amin(3),
            y.sum(2),
            F.conv2d(z, w, padding=1).sum(3),
        )

    irc.explain(fn, x, w, z, options={"layout": "nhwc", "strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/02-tensor-opt.mlir")]
    lines = [line for line in text.splitlines() if any(f" = tn.{r} " in line for r in ("mean", "sum", "amax", "amin"))]
    nhwc = sorted(line.split(" = tn.")[1].split(" ")[0] for line in lines if ": tensor<2x20x15x6xf32> ->" in line)
    assert nhwc == ["amax", "amin", "mean", "sum", "sum"], text  # adaptive_avg_pool2d is the mean
    assert [line.split(" = tn.")[1].split(" ")[0] for line in lines if ": tensor<1x2x300x6xf32> ->" in line] == [
        "sum"
    ], text
    assert len(lines) == 6, text  # nothing reduces a partial result or an NCHW view
    for got, want in zip(compile_irc(fn, layout="nhwc")(x, w, z), fn(x, w, z)):
        torch.testing.assert_close(got, want, equal_nan=True, **FORWARD_TOL)


def test_reductions_of_a_channels_last_input_read_it_as_nhwc(tmp_path):
    """A spatial mean, sum, amax or amin of an input the caller passes channels-last reads it as NHWC (a view), with
    eager's numbers; a reduction over the channels reads the NCHW view."""
    x = torch.randn(2, 6, 20, 15)
    x[0, 2, 4, 4] = float("nan")
    x = x.contiguous(memory_format=torch.channels_last)
    fn = lambda t: (t.mean((2, 3)), t.sum(3, keepdim=True), t.amax((0, 2, 3)), t.amin(2), t.sum(1))  # noqa: E731
    irc.explain(fn, x, options={"strict": True, "dump_dir": str(tmp_path)})
    (text,) = [f.read_text() for f in tmp_path.glob("*/02-tensor-opt.mlir")]
    lines = [line for line in text.splitlines() if any(f" = tn.{r} " in line for r in ("mean", "sum", "amax", "amin"))]
    assert sum(": tensor<2x20x15x6xf32> ->" in line for line in lines) == 4, text
    assert sum(": tensor<2x6x20x15xf32> ->" in line for line in lines) == 1, text  # the sum over the channels
    for got, want in zip(compile_irc(fn)(x), fn(x)):
        torch.testing.assert_close(got, want, equal_nan=True, **FORWARD_TOL)


@pytest.mark.parametrize(
    "pool",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        dict(kernel_size=3, stride=1, padding=1, divisor_override=5),
    ],
)
def test_avg_pool_of_an_nhwc_value_pools_channels_last(pool, tmp_path):
    """An average pool of an NHWC region's output, and of an input the caller passes channels-last, pools the NHWC
    value itself (channels innermost), with eager's numbers and strides: padding counted or not, ceil mode, a
    divisor, odd sizes."""
    x, w = torch.randn(2, 3, 11, 9), torch.randn(5, 3, 3, 3)
    fn = lambda x, w: F.avg_pool2d(F.conv2d(x, w, padding=1), **pool)  # noqa: E731
    irc.explain(fn, x, w, options={"layout": "nhwc", "strict": True, "dump_dir": str(tmp_path / "region")})
    alone = lambda t: F.avg_pool2d(t, **pool)  # noqa: E731
    t = torch.randn(2, 5, 11, 9).contiguous(memory_format=torch.channels_last)
    irc.explain(alone, t, options={"strict": True, "dump_dir": str(tmp_path / "input")})
    texts = [f.read_text() for f in tmp_path.glob("*/*/02-tensor-opt.mlir")]
    assert len(texts) == 2
    for text in texts:
        assert "channels_last" in next(line for line in text.splitlines() if "tn.avg_pool2d" in line), text
    torch.testing.assert_close(compile_irc(fn, layout="nhwc")(x, w), fn(x, w), **FORWARD_TOL)
    got, want = compile_irc(alone)(t), alone(t)
    torch.testing.assert_close(got, want, **FORWARD_TOL)
    assert got.stride() == want.stride()


@pytest.mark.parametrize("freeze", [None, False], ids=["frozen", "unfrozen"])
def test_a_flatten_into_a_linear_layer_reads_the_nhwc_region(tmp_path, freeze):
    """conv, relu, flatten, linear with the conv in NHWC: the linear layer reads the NHWC output as it lies, its
    weight's columns reordered instead (layout_rules.flatten_nhwc_into_product), folded into a constant when frozen,
    a copy per call when not, and the product reads that copy transposed, as it read the weight; eager's numbers
    either way. Before, the relu's kernel wrote the activation back NCHW."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 5 * 7, 4)
    ).eval()
    x = torch.randn(6, 3, 5, 7)
    with torch.no_grad():
        got = compile_irc(model, layout="nhwc", freeze=freeze, dump_dir=str(tmp_path))(x)
        torch.testing.assert_close(got, model(x), **FORWARD_TOL)
    (text,) = [max(d.glob("*-tensor-opt.mlir")).read_text() for d in tmp_path.iterdir()]  # the last tensor-opt dump
    assert "tensor<6x5x7x8xf32> -> tensor<6x280xf32>" in text and "perm = [0, 3, 1, 2]" not in text, text
    weight_columns = "perm = [0, 2, 3, 1] : tensor<4x8x5x7xf32> -> tensor<4x5x7x8xf32>"
    assert (weight_columns in text) == (freeze is False), text
    assert "perm = [1, 0] : tensor<4x280xf32> -> tensor<280x4xf32>" in text, text  # read transposed, as B was


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16-autocast"])
def test_train_mode_batch_norm_of_an_nhwc_region_matches_eager(dtype, tmp_path):
    """A train-mode BatchNorm under no_grad (torch.optim.swa_utils.update_bn's pass) after an NHWC convolution reads
    the NHWC value, channels innermost (lower_nn.lower_batch_norm_training), with eager's output and running
    statistics: odd sizes (5 channels, 7x9), a batch of 3."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3, padding=1), torch.nn.BatchNorm2d(5), torch.nn.ReLU()).train()
    x = torch.randn(3, 3, 7, 9)
    mine = twin(model)
    amp = dict(device_type="cpu", dtype=torch.bfloat16, enabled=dtype != torch.float32)
    with torch.no_grad(), torch.autocast(**amp):
        want = model(x)
        got = compile_irc(mine, layout="nhwc", dump_dir=str(tmp_path))(x)
    (text,) = [f.read_text() for f in tmp_path.glob("*/05-mem.mlir")]
    assert (
        'space = affine_map<() -> (3, 7, 9, 5)> iterators = ["reduction", "reduction", "reduction", "parallel"]' in text
    )
    tol = FORWARD_TOL if dtype == torch.float32 else dict(atol=3e-2, rtol=3e-2)  # bf16: eps 2^-8 on O(1) values
    torch.testing.assert_close(got.float(), want.float(), **tol)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(mine[1], name), getattr(model[1], name), **FORWARD_TOL)


def _nests(text: str) -> list[str]:
    """Each loop.nest of a loop-stage dump, from its line to the next nest's."""
    return ["loop.nest" + part for part in text.split("loop.nest")[1:]]


def test_a_backward_reduces_saved_channels_last_activations_from_a_row_major_copy(tmp_path):
    """A training step whose forward saves its NHWC convolutions' outputs channels-last: the backward's batch-norm
    gradient, one reducing nest over (N, C, H, W) that also reads row-major gradients, reads each of them from a
    row-major copy (input-layout), not across its lines; loss, gradients, statistics and the step match eager's. Odd
    sizes: 5 and 6 channels, 7x9 images, a batch of 3."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 5, 3, padding=1),
        torch.nn.BatchNorm2d(5),
        torch.nn.ReLU(),
        torch.nn.Conv2d(5, 6, 3, padding=1),
        torch.nn.BatchNorm2d(6),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(6 * 7 * 9, 4),
    )
    inputs = (torch.randn(3, 3, 7, 9),)
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
    step = compile_irc(loss_fn(mine), layout="nhwc", dump_dir=str(tmp_path))
    got = train_step(mine, inputs, step, target, optimizer="sgd")
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    compare_steps(got, want)
    (backward,) = [d for d in tmp_path.iterdir() if d.name.endswith("-backward")]
    text = (backward / "03-loop.mlir").read_text()
    main = text.split("irc.input_layout = ")[1]
    saved = [name for name in ("convolution", "convolution_1") if f"%{name}: tensor" in text]
    assert saved and "[0 : i64, 2 : i64, 3 : i64, 1 : i64]" in main.split("}")[0], text
    for name in saved:
        readers = [n for n in _nests(text) if f"loop.load %{name}[" in n]
        assert len(readers) == 1 and '"reduction"' not in readers[0].split("{")[0], (name, readers)
