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
import functools
from contextlib import nullcontext
from dataclasses import dataclass, replace

import pytest
import torch
import torch.nn.functional as F

from irc import report
from irc.bench import models as M
from tests.conftest import compile_irc
from tests.numeric.low_precision import LowPrecisionMismatch, assert_low_precision_close, default_floor, eps, upcast

DTYPES = pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
LR, MOMENTUM = 0.05, 0.9

MODELS = {
    "mlp": lambda: (M.MLP(64, 128, 10), (torch.randn(16, 64),)),
    "convnet": lambda: (M.ConvNet(size=8), (torch.randn(4, 3, 8, 8),)),
    "transformer": lambda: (
        M.MiniTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16, dropout=0.0),
        (torch.randint(0, 100, (4, 16)),),
    ),
    "transformer-mask": lambda: (
        M.MiniTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16, dropout=0.0),
        (torch.randint(0, 100, (4, 16)), torch.arange(16)[None, :] < torch.tensor([[16], [9], [12], [8]])),
    ),
    "mha": lambda: (M.SelfAttention(d_model=32, heads=4), (torch.randn(4, 16, 32),)),
    "torch-transformer": lambda: (  # in inference, each layer one fused op: the encoder fast path
        M.TorchTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16),
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


@DTYPES
def test_the_encoder_fast_path_under_autocast_has_narrow_products(dtype, tmp_path):
    """nn.TransformerEncoder in inference runs each layer as torch's fused op, whose products eager's autocast
    lowers (the kernel calls them through the dispatcher): compiled, every product of the layer is in `dtype` too,
    not float32 (frontend/attention_ops.inline_encoder_layers). Its output is judged with the other MODELS above
    ("torch-transformer")."""
    torch.manual_seed(0)
    model = M.TorchTransformer(vocab=100, d_model=32, heads=4, layers=2, d_ff=64, max_len=16).eval()
    ids = torch.randint(0, 100, (4, 16))
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        compile_irc(copy.deepcopy(model), dump_dir=str(tmp_path))(ids)
    (fx,) = [f.read_text() for f in tmp_path.glob("*/00-fx.py")]
    products = [line for line in fx.splitlines() if "aten.addmm" in line or "aten.mm" in line]
    narrow = {torch.bfloat16: "bf16[", torch.float16: "f16["}[dtype]
    assert len(products) == 2 * 4 + 1 and all(narrow in line for line in products), products


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
    """One training step: forward and loss under autocast(dtype) (none for dtype=None), backward and SGD outside;
    (loss, grads, buffers, params, what else loss_call returned beside the loss)."""
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    with torch.autocast("cpu", dtype=dtype) if dtype else nullcontext():
        loss = loss_call(*inputs)
    loss, decisions = loss if isinstance(loss, tuple) else (loss, None)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    buffers = {n: b.detach().clone() for n, b in model.named_buffers() if b.is_floating_point()}
    opt.step()
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    return loss.detach(), grads, buffers, params, decisions


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
    _judge_training_step(_training_step(name, dtype, cast_whole=False), name, dtype, cast_whole=False)


@DTYPES
@pytest.mark.parametrize("name", MODELS)
def test_training_step_of_a_model_cast_whole_is_as_accurate_as_eager(name, dtype):
    """The same step on the model cast whole (model.to(dtype), inputs in dtype, no autocast): every graph compiled,
    nothing eager, nothing on the reference evaluator (train-mode BatchNorm's running statistics in dtype, an
    embedding's gradient, cross-entropy's one-hot gradient). The parameters after the step are in dtype: their floor
    is one ulp of the dtype at the parameter's scale.

    ConvNet's ReLU masks are the signs of narrow activations whose rounding error (a convolution's output rounded
    to the dtype, then normalised) exceeds the values near zero: eager and irc each flip some of the float64 run's
    decisions, different ones, and a gradient summed over a channel takes a flipped term whole, so against one
    float64 run the error of either is chance. Each run is judged instead against a float64 step that takes its own
    decisions (the ReLUs' masks its run computed: _masked_reference): with the flips out of both errors what is left
    is rounding, which a wrong gradient cannot hide under (test_a_wrong_gradient_fails_the_judge_of_its_own_decisions)."""
    _judge_training_step(_training_step(name, dtype, cast_whole=True), name, dtype, cast_whole=True)


@DTYPES
def test_a_wrong_gradient_fails_the_judge_of_its_own_decisions(dtype):
    """The cast-whole ConvNet's judge can fail: irc's first convolution's weight gradient with one element moved by
    5% of the gradient's largest value fails against the float64 step of irc's own decisions (in bf16 that is half
    eager's error against the float64 step of the exact decisions, which such a judge would have let pass). And irc's
    own gradients judged against the step of eager's decisions fail too: the flips are what the judge takes out."""
    step = _training_step("convnet", dtype, cast_whole=True)
    grads = dict(step.got[1])
    wrong = grads["features.0.weight"].clone()
    wrong.view(-1)[0] += 0.05 * wrong.abs().max()
    grads["features.0.weight"] = wrong
    with pytest.raises(LowPrecisionMismatch, match="grad of features.0.weight"):
        _judge_training_step(replace(step, got=(step.got[0], grads, *step.got[2:])), "convnet", dtype, True)
    with pytest.raises(LowPrecisionMismatch, match="features"):
        _judge_training_step(replace(step, got_ref=step.eager_ref), "convnet", dtype, True)


class _MaskedReLU(torch.nn.Module):
    """A ReLU that keeps the elements a given run kept: x * mask."""

    def __init__(self, mask: torch.Tensor):
        super().__init__()
        self.mask = mask

    def forward(self, x):
        return x * self.mask.to(x.dtype)


def _loss_and_relu_outputs(model, target, x):
    """ConvNet's loss and each ReLU's output (the decisions the run took), one layer of `features` at a time."""
    outputs = []
    for layer in model.features:
        x = layer(x)
        if isinstance(layer, torch.nn.ReLU):
            outputs.append(x.detach())
    return F.cross_entropy(model.head(torch.flatten(x, 1)), target), outputs


def _masked_reference(model64, relu_outputs):
    """The float64 model that takes a run's ReLU decisions: each ReLU of `features` keeps where the run's output
    was positive (threshold_backward's own test), so its step differs from the run's by rounding only."""
    model64 = copy.deepcopy(model64)
    masks = iter(relu_outputs)
    for i, layer in enumerate(model64.features):
        if isinstance(layer, torch.nn.ReLU):
            model64.features[i] = _MaskedReLU(next(masks) > 0)
    return model64


@dataclass(frozen=True)
class _Step:
    """One training step's (loss, grads, buffers, params): the float64 reference's, eager's, irc's, and the float64
    steps that take eager's and irc's own ReLU decisions (the reference itself where a model takes none);
    term_sums: _bias_term_sums of the reference."""

    ref: tuple
    eager: tuple
    got: tuple
    eager_ref: tuple
    got_ref: tuple
    term_sums: dict


@functools.cache  # test_a_wrong_gradient_fails_the_judge_of_its_own_decisions judges the same step again
def _training_step(name, dtype, cast_whole: bool) -> _Step:
    model, inputs = build(name, train=True)
    if cast_whole:
        model = model.to(dtype)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    ref_model, ref_inputs = double(model, inputs)
    start64 = copy.deepcopy(ref_model)  # taken before the hooks, which a copy would share
    mine = copy.deepcopy(model)
    target = torch.randint(0, 10, (inputs[0].shape[0],), generator=torch.Generator().manual_seed(1))
    decides = cast_whole and name == "convnet"

    def loss_of(m):
        if decides:
            return lambda *a: _loss_and_relu_outputs(m, target, *a)
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
    own = [ref, ref]
    if decides:
        for i, run in enumerate((eager, got)):
            masked = _masked_reference(start64, run[4])
            own[i] = _step(masked, ref_inputs, target, loss_of(masked), None)
    return _Step(ref[:4], eager[:4], got[:4], own[0][:4], own[1][:4], term_sums)


def _judge_training_step(step: _Step, name, dtype, cast_whole: bool) -> None:
    """Each of irc's results within 1.5x eager's error (low_precision.py), each run's error measured against the
    float64 step of its own decisions."""
    ref_grads, ref_params, term_sums = step.ref[1], step.ref[3], step.term_sums

    def judge(what: str, i: int, n=None, **kw):
        got, eager, got_ref, eager_ref = (
            s[i] if n is None else s[i][n] for s in (step.got, step.eager, step.got_ref, step.eager_ref)
        )
        assert_low_precision_close(got, eager, got_ref, per_element=False, where=what, eager_ref=eager_ref, **kw)

    judge("loss", 0, dtype=dtype)
    got_grads = step.got[1]
    assert set(got_grads) == set(ref_grads) and all(g is not None for g in got_grads.values())
    scale = max(g.abs().max().item() for g in ref_grads.values())
    zero = {n for n, g in ref_grads.items() if g.abs().max().item() <= 1e-12 * scale}  # zero but for rounding
    assert zero == ({"features.0.bias", "features.3.bias"} if name == "convnet" else set())
    for n in ref_grads:
        floor = eps(dtype) * term_sums[n].max().item() if n in zero else None
        judge(f"grad of {n}", 1, n, dtype=dtype, floor=floor)
    assert set(step.got[2]) == set(step.ref[2])
    for n in step.ref[2]:
        judge(f"buffer {n}", 2, n, dtype=dtype)
    for n in ref_params:
        grad_floor = eps(dtype) * term_sums[n].max().item() if n in zero else default_floor(ref_grads[n], dtype)
        param_floor = default_floor(ref_params[n], dtype if cast_whole else torch.float32)
        judge(f"parameter {n} after the step", 3, n, floor=LR * grad_floor + param_floor)


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
