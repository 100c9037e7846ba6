"""The demo models in bfloat16 and float16, judged the way low precision must be (tests/numeric/low_precision.py):
every output's error against a float64 run of the same computation at most 1.5x eager's own narrow-precision
error, plus a floor of one ulp at the output's scale; never eager's bits. (Rule 1 of low_precision.py: the
per-element rule does not fit outputs of many layers, per_element=False.)

- inference under torch.autocast("cpu", dtype) (no_grad): the logits;
- one training step with forward and loss under autocast, backward and SGD (momentum 0.9) outside it: the loss,
  every parameter's gradient, BatchNorm's running statistics and every parameter after the step. The reference
  is the same model in float64 without autocast, from the same float32 parameters;
- the model cast whole (model.to(dtype), inputs in dtype), inference: the reference is the cast model's
  parameters and inputs upcast exactly to float64;
- determinism: the same bf16 graph compiled twice (torch._dynamo.reset() and no disk cache between, so every
  measured choice is measured again) gives the same bits, each compiled model called twice.

The models are bench/models.py's MLP, ConvNet and MiniTransformer at test size (the classes of the demo, smaller
widths, as in test_autocast.py), so that the whole file compiles in well under a minute on two cores.
"""

import copy
from contextlib import nullcontext

import pytest
import torch
import torch.nn.functional as F

from irc import report
from irc.bench import models as M
from tests.conftest import compile_irc
from tests.numeric.low_precision import assert_low_precision_close, default_floor, eps, upcast

DTYPES = pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
LR, MOMENTUM = 0.05, 0.9

MODELS = {
    "mlp": lambda: (M.MLP(64, 128, 10), (torch.randn(16, 64),)),
    "convnet": lambda: (M.ConvNet(size=8), (torch.randn(4, 3, 8, 8),)),
    "transformer": lambda: (
        M.MiniTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16, dropout=0.0),
        (torch.randint(0, 100, (4, 16)),),
    ),
}


def build(name: str, train: bool):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    M._perturb_batch_norms(model)  # eval-mode BatchNorm is not an identity; affine parameters not 1 and 0
    return model.train(train), inputs


def double(model, inputs):
    """The float64 reference's model and inputs: float parameters, buffers and inputs upcast exactly."""
    return copy.deepcopy(model).double(), upcast(inputs)


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_inference_under_autocast_is_as_accurate_as_eager(name, dtype):
    model, inputs = build(name, train=False)
    ref_model, ref_inputs = double(model, inputs)
    compiled = compile_irc(copy.deepcopy(model))
    with torch.no_grad():
        ref = ref_model(*ref_inputs)
        with torch.autocast("cpu", dtype=dtype):
            eager = model(*inputs)
            got = compiled(*inputs)
    assert eager.dtype == dtype  # autocast ran the final Linear in the narrow type
    assert_low_precision_close(got, eager, ref, dtype, per_element=False, where=f"{name} logits")


def _bias_term_sums(model) -> dict[str, torch.Tensor]:
    """Hooks that record, per module with a bias, sum |d loss / d output| per output channel (the magnitude of
    the terms its bias gradient sums), filled in by the next backward pass."""
    sums = {}
    for name, m in model.named_modules():
        if isinstance(getattr(m, "bias", None), torch.nn.Parameter):
            dim = -1 if isinstance(m, torch.nn.Linear) else 1

            def keep(g, name=name, dim=dim):
                sums[f"{name}.bias"] = g.detach().abs().movedim(dim, 0).flatten(1).sum(1)

            def hook(module, args, out, keep=keep):  # returns None: the output stays as it is
                out.register_hook(keep)

            m.register_forward_hook(hook)
    return sums


def _step(model, inputs, target, loss_call, dtype):
    """One training step: forward and loss under autocast(dtype) (none for dtype=None), backward and SGD outside."""
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    with torch.autocast("cpu", dtype=dtype) if dtype else nullcontext():
        loss = loss_call(*inputs)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    buffers = {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}
    opt.step()
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    return loss.detach(), grads, buffers, params


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_training_step_under_autocast_is_as_accurate_as_eager(name, dtype):
    """Loss, gradients, running statistics and parameters after one SGD step. A parameter after the step is
    p - lr * grad (the momentum buffer starts as the gradient), in float32: its floor is lr times the gradient's
    floor plus one float32 ulp of the parameter, so the update is judged, not hidden under the parameter's own
    bf16-sized ulp.

    A gradient that is zero in exact arithmetic (ConvNet's convolution biases feed train-mode BatchNorm, which
    subtracts the channel mean: d loss / d bias sums to 0) is rounding noise in every precision, and 1.5x eager's
    noise would judge chance. Its floor is one ulp of the dtype times the sum of the magnitudes of the terms it
    sums (sum |d loss / d output| over the channel, in the reference), the bound on that sum's rounding error:
    a bias gradient that is not noise, of the size of the others, still fails."""
    _check_training_step(name, dtype, cast_whole=False)


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_training_step_of_a_model_cast_whole_is_as_accurate_as_eager(name, dtype):
    """The same step on the model cast whole (model.to(dtype), inputs in dtype, no autocast): every graph compiled,
    nothing eager, nothing on the reference evaluator (train-mode BatchNorm's running statistics in dtype, an
    embedding's gradient, cross-entropy's one-hot gradient). The parameters after the step are in dtype: their floor
    is one ulp of the dtype at the parameter's scale.

    ConvNet's gradients before its last ReLU are not judged here: the ReLU's mask is the sign of a narrow activation
    whose rounding error (its convolution's output rounded to the dtype, then normalised) exceeds the values near
    zero, so eager and irc each flip a handful of the reference's decisions, different ones (bf16: eager 16, irc 14
    of the first block's), and a gradient summed over a channel takes a flipped term whole. Which flips fall in the
    worst channel is chance, not accuracy; those gradients are judged in the autocast step above and, without a
    ReLU, in tests/cpu/test_narrow_products.py."""
    _check_training_step(name, dtype, cast_whole=True)


def _check_training_step(name, dtype, cast_whole: bool):
    model, inputs = build(name, train=True)
    if cast_whole:
        model = model.to(dtype)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    ref_model, ref_inputs = double(model, inputs)
    mine = copy.deepcopy(model)
    target = torch.randint(0, 10, (inputs[0].shape[0],), generator=torch.Generator().manual_seed(1))

    def loss_of(m):
        return lambda *a: F.cross_entropy(m(*a), target)

    term_sums = _bias_term_sums(ref_model)
    autocast = None if cast_whole else dtype
    ref = _step(ref_model, ref_inputs, target, loss_of(ref_model), None)
    eager = _step(model, inputs, target, loss_of(model), autocast)
    start = report.mark()
    got = _step(mine, inputs, target, compile_irc(loss_of(mine)), autocast)
    graphs = report.reports_since(start).graphs
    assert graphs and all(g.native for g in graphs), [(g.eager_graph, g.fallbacks) for g in graphs]
    assert not [f for g in graphs for f in g.target_fallbacks], [g.target_fallbacks for g in graphs]
    (ref_loss, ref_grads, ref_buffers, ref_params) = ref
    (eager_loss, eager_grads, eager_buffers, eager_params) = eager
    (got_loss, got_grads, got_buffers, got_params) = got

    assert_low_precision_close(got_loss, eager_loss, ref_loss, dtype, per_element=False, where="loss")
    assert set(got_grads) == set(ref_grads) and all(g is not None for g in got_grads.values())
    scale = max(g.abs().max().item() for g in ref_grads.values())
    zero = {n for n, g in ref_grads.items() if g.abs().max().item() <= 1e-12 * scale}  # zero but for rounding
    assert zero == ({"features.0.bias", "features.3.bias"} if name == "convnet" else set())
    chance = {n for n in ref_grads if n.startswith("features.")} if cast_whole and name == "convnet" else set()
    for n in ref_grads.keys() - chance:
        floor = eps(dtype) * term_sums[n].max().item() if n in zero else None
        assert_low_precision_close(
            got_grads[n], eager_grads[n], ref_grads[n], dtype, floor=floor, per_element=False, where=f"grad of {n}"
        )
    assert set(got_buffers) == set(ref_buffers)
    for n in ref_buffers:
        assert_low_precision_close(
            got_buffers[n], eager_buffers[n], ref_buffers[n], dtype, per_element=False, where=f"buffer {n}"
        )
    for n in ref_params.keys() - chance:
        grad_floor = eps(dtype) * term_sums[n].max().item() if n in zero else default_floor(ref_grads[n], dtype)
        param_floor = default_floor(ref_params[n], dtype if cast_whole else torch.float32)
        assert_low_precision_close(
            got_params[n],
            eager_params[n],
            ref_params[n],
            floor=LR * grad_floor + param_floor,
            per_element=False,
            where=f"parameter {n} after the step",
        )


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_model_cast_whole_is_as_accurate_as_eager(name, dtype):
    model, inputs = build(name, train=False)
    model = model.to(dtype)
    inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    ref_model, ref_inputs = double(model, inputs)
    compiled = compile_irc(copy.deepcopy(model))
    with torch.no_grad():
        ref = ref_model(*ref_inputs)
        eager = model(*inputs)
        got = compiled(*inputs)
    assert eager.dtype == dtype
    assert_low_precision_close(got, eager, ref, dtype, per_element=False, where=f"{name} in {dtype} logits")


def test_bf16_graph_compiled_twice_gives_the_same_bits():
    """No timing decides a number (docs/design.md): the convolution layout's measured choice, a kernel's
    vector width or threads. Two compiles with no disk cache measure everything afresh."""
    model, inputs = build("convnet", train=False)
    model = model.to(torch.bfloat16)
    inputs = tuple(x.to(torch.bfloat16) if x.is_floating_point() else x for x in inputs)
    outs = []
    with torch.no_grad():
        for _ in range(2):
            torch._dynamo.reset()
            compiled = compile_irc(copy.deepcopy(model), cache=False)
            outs += [compiled(*inputs), compiled(*inputs)]
    assert outs[0].dtype == torch.bfloat16
    for i, o in enumerate(outs[1:], 1):
        assert torch.equal(o, outs[0]), f"call {i} differs from the first: max difference {(o - outs[0]).abs().max()}"


def test_bf16_training_step_compiled_twice_gives_the_same_bits():
    """The same for the forward and backward graphs of a training step under autocast: loss and gradients."""
    model, inputs = build("transformer", train=True)
    target = torch.randint(0, 10, (inputs[0].shape[0],), generator=torch.Generator().manual_seed(1))
    results = []
    for _ in range(2):
        torch._dynamo.reset()
        mine = copy.deepcopy(model)
        compiled = compile_irc(lambda *a, m=mine: F.cross_entropy(m(*a), target), cache=False)
        for _ in range(2):  # no optimizer step: each call sees the same parameters
            mine.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = compiled(*inputs)
            loss.backward()
            results.append((loss.detach(), {n: p.grad.clone() for n, p in mine.named_parameters()}))
    loss0, grads0 = results[0]
    for i, (loss, grads) in enumerate(results[1:], 1):
        assert torch.equal(loss, loss0), f"run {i}: loss {loss.item()} differs from the first's {loss0.item()}"
        for n, g in grads.items():
            assert torch.equal(g, grads0[n]), f"run {i}: grad of {n} differs by {(g - grads0[n]).abs().max()}"
