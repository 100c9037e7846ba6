"""ties.judge_step: a training step where irc and eager differ beyond the tolerance passes as a rounding tie only
where each matches a float64 step on its own side of a kink that one element lies within float32 rounding of; any
other difference stays a Mismatch. The "irc" side here is an eager float32 step that sums in another order."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from irc.bench import demo
from irc.bench import models as M
from irc.bench.check import Mismatch, compare_steps, loss_fn, targets_for, train_step, twin
from irc.bench.ties import judge_step

BATCH = 8
ACTS = {  # op name in the verdict -> the activation
    "relu": F.relu,
    "relu_": lambda h: F.relu(h, inplace=True),
    "threshold": lambda h: F.threshold(h, 0.0, 0.0),
    "leaky_relu": lambda h: F.leaky_relu(h, 0.1),
    "hardtanh": F.relu6,
    "gt": lambda h: torch.where(h > 0, h, 0.1 * h),
    "maximum": lambda h: torch.maximum(h, torch.zeros_like(h)),  # on the kink: half the gradient to each
    "abs": torch.abs,  # on the kink: no gradient
}


class TieNet(nn.Module):
    """Linear-act-Linear on a batch whose row 0 is 0, so fc1's output at [0, 0] is fc1.bias[0] = `at`. With `absorb`
    the element goes through (h + 1) - 1 where eager's order has h + (1 - 1): float32 rounds 1 + 3e-8 to 1, so
    that one element becomes exactly 0 (on the kink, or the other side of it), every other value unchanged."""

    def __init__(self, act, at: float = 3e-8, absorb: bool = False):
        super().__init__()
        torch.manual_seed(0)
        self.fc1, self.fc2, self.act, self.absorb = nn.Linear(4, 6), nn.Linear(6, 3), act, absorb
        with torch.no_grad():
            self.fc1.bias[0] = at
        one = torch.zeros(BATCH, 6)
        one[0, 0] = 1.0
        self.register_buffer("one", one)

    def forward(self, x):
        h = self.fc1(x)
        h = (h + self.one) - self.one if self.absorb else h + (self.one - self.one)
        return self.fc2(self.act(h))


def _steps(act, at: float = 3e-8, absorb: bool = True):
    """(the model before the steps, its inputs, target, the "irc" step (absorbing), the eager step)."""
    x = torch.randn(BATCH, 4, generator=torch.Generator().manual_seed(1))
    x[0] = 0
    eager, other = TieNet(act, at), TieNet(act, at, absorb)
    before = twin(eager)
    with torch.no_grad():
        target = targets_for(twin(eager)(x))
    got = train_step(other, (x,), loss_fn(other), target)
    want = train_step(eager, (x,), loss_fn(eager), target)
    return before, (x,), target, got, want


@pytest.mark.parametrize("op", ACTS)
def test_an_element_rounded_across_a_kink_is_a_tie(op):
    before, inputs, target, got, want = _steps(ACTS[op])
    with pytest.raises(Mismatch, match="grad of fc1.bias"):  # the case is real: one mask element moves a gradient
        compare_steps(got, want)
    verdict = judge_step(before, inputs, target, got, want)
    moved = "exactly on its kink" if op in ("maximum", "abs") else "on the other side"
    assert verdict.tie is not None and verdict.tie.startswith(f"rounding tie: a{'n' if op[0] == 'a' else ''} {op}")
    assert "3e-08" in verdict.tie, verdict.tie
    assert f"irc matches the float64 step with that element {moved}, eager the float64 step as computed" in verdict.tie
    assert max(verdict.errs.values()) < 1e-6, verdict.errs  # irc against its float64 step: rounding only


@pytest.mark.parametrize("fault", ["grad", "param", "loss after step"])
def test_a_wrong_result_beside_a_tie_is_a_mismatch(fault):
    """The same tie, and irc also wrong by 1% somewhere: no float64 step matches irc, so no tie."""
    before, inputs, target, got, want = _steps(F.relu)
    if fault == "grad":
        got.grads["fc2.weight"] *= 1.01
    elif fault == "param":
        got.params["fc2.bias"] *= 1.01
    else:
        got.loss2 *= 1.01
    with pytest.raises(Mismatch) as e:
        judge_step(before, inputs, target, got, want)
    assert str(e.value).startswith("grad of fc1.bias differs from eager"), str(e.value)  # the first difference
    assert "; not a rounding tie: " in str(e.value) and "eager matches the float64 step as computed" in str(e.value)
    assert "irc matches" not in str(e.value)


def test_a_mismatch_with_no_element_near_a_kink_is_a_mismatch():
    """Every ReLU input is far from 0 or exactly 0 (the second ReLU's zeros are structure, not rounding)."""
    before, inputs, target, got, want = _steps(lambda h: F.relu(F.relu(h)), at=0.3, absorb=False)
    judge_step(before, inputs, target, got, want)  # the same step: a match
    got.grads["fc1.weight"] *= 1.01
    with pytest.raises(Mismatch, match="grad of fc1.weight .*; not a rounding tie: no element of the float64 step"):
        judge_step(before, inputs, target, got, want)


def test_an_element_far_from_its_kink_on_the_wrong_side_is_a_mismatch():
    """A tie-sized element exists, but irc's wrong mask element lies 0.3 from the kink: a bug, not a tie."""
    before, inputs, target, _, want = _steps(F.relu, absorb=False)
    other = twin(before)
    with torch.no_grad():
        h = other.fc1(inputs[0])
        row, col = (h > 0.3).nonzero()[0].tolist()
    other.act = lambda h: F.relu(h.index_put((torch.tensor(row), torch.tensor(col)), -h[row, col]))
    got = train_step(other, inputs, loss_fn(other), target)
    with pytest.raises(Mismatch, match="not a rounding tie: of the float64 step and 1 with one of the 1 elements"):
        judge_step(before, inputs, target, got, want)


def test_the_demo_convnets_rounding_tie_simulated():
    """The Xeon failure (grad of features.3.weight 4.5e-4 from eager): the second ReLU's input closest to 0 in float64
    (5.7e-9; eager float32 gives 5.3e-8) put on the other side of eager's in an otherwise eager float32 step."""
    model, inputs = M.convnet(train=True)
    before, other = twin(model), twin(model)
    with torch.no_grad():
        target = targets_for(twin(model)(*inputs))
        x64 = twin(model).double().features[:5](inputs[0].double())
    index = torch.unravel_index(x64.abs().argmin(), x64.shape)
    assert abs(x64[index].item()) < 1e-8

    def other_side(module, args):  # the first forward only: that of the gradients
        handle.remove()
        x = args[0].clone()
        x[index] = 0.0 if args[0][index] > 0 else x64[index].abs().float()
        return (x,)

    handle = other.features[5].register_forward_pre_hook(other_side)
    got = train_step(other, inputs, loss_fn(other), target)
    want = train_step(model, inputs, loss_fn(model), target)
    with pytest.raises(Mismatch, match="grad of features.3.weight"):
        compare_steps(got, want)
    verdict = judge_step(before, inputs, target, got, want)
    assert verdict.tie and verdict.tie.startswith("rounding tie: a relu input "), verdict.tie
    assert "irc and eager take different sides" in verdict.tie


def test_the_demo_judges_convnet_train(capsys):
    """The demo's convnet-train through irc: a match, or a rounding tie that float64 settles (as on a Xeon)."""
    out = demo.run_demo(M.BY_NAME["convnet-train"], {"strict": True}, repeats=0, train=True)
    printed = capsys.readouterr().out
    assert out.ok, printed
    assert "train step: matches eager" in printed or "train step: match (rounding tie: a relu input" in printed
