"""Comparing a compiled model with eager: forward outputs, one training step, timing. Shared by the demo and tests."""

import copy
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._pytree import tree_flatten

# float32 tolerances: irc reorders reductions (decompositions, fusion), so allow a few ulps of accumulated error
FORWARD_TOL = {"rtol": 1e-4, "atol": 1e-4}
GRAD_TOL = {"rtol": 1e-3, "atol": 1e-4}
GRAD_TOL_F64 = {"rtol": 1e-9, "atol": 1e-12}


class Mismatch(AssertionError):
    """A compiled result differs from eager beyond tolerance; the message names what and by how much."""


def max_error(got, want) -> float:
    """Largest absolute difference over matching tensor leaves (0.0 when there are none)."""
    errs = [0.0]
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor) and g.numel():
            errs.append((g.double() - w.double()).abs().max().item())
    return max(errs)


def assert_close(what: str, got, want, tol: dict) -> float:
    """torch.testing.assert_close over pytrees, raising Mismatch(what...) on failure; returns the max error."""
    g, gspec = tree_flatten(got)
    w, wspec = tree_flatten(want)
    if gspec != wspec:
        raise Mismatch(f"{what}: structure {gspec} differs from eager's {wspec}")
    for i, (a, b) in enumerate(zip(g, w)):
        try:
            torch.testing.assert_close(a, b, **tol)
        except AssertionError as e:
            where = f"{what}[{i}]" if len(g) > 1 else what
            raise Mismatch(
                f"{where} differs from eager: {str(e).strip().splitlines()[0]} (max abs error {max_error(a, b):.3g})"
            ) from None
    return max_error(got, want)


# -- training step ---------------------------------------------------------------------------


def targets_for(out: torch.Tensor, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, out.shape[-1], out.shape[:-1], generator=g)


def loss_fn(model: nn.Module) -> Callable:
    """The function compiled for training: the model's logits through cross-entropy (so the loss is in the graph)."""

    def loss(*inputs_and_target):
        *inputs, target = inputs_and_target
        return F.cross_entropy(model(*inputs), target)

    return loss


@dataclass
class StepResult:
    loss: torch.Tensor
    grads: dict[str, torch.Tensor]
    buffers: dict[str, torch.Tensor]  # after the forward (BatchNorm running statistics)
    params: dict[str, torch.Tensor]  # after the optimizer step
    loss2: torch.Tensor  # the loss of a second forward, on the updated parameters
    seconds: list[float] = field(default_factory=list)


def make_optimizer(model: nn.Module, kind: str) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    raise ValueError(f"unknown optimizer {kind!r}; valid: sgd, adam")


def train_step(
    model: nn.Module, inputs: tuple, step: Callable, target: torch.Tensor, optimizer: str = "sgd"
) -> StepResult:
    """One forward+backward through `step` (eager or compiled loss), an optimizer step, and a second forward."""
    model.train()
    opt = make_optimizer(model, optimizer)
    opt.zero_grad(set_to_none=True)
    loss = step(*inputs, target)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    if missing:
        raise Mismatch(f"no gradient for {', '.join(missing)}")
    buffers = {n: b.detach().clone() for n, b in model.named_buffers()}
    opt.step()
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    loss2 = step(*inputs, target).detach()  # grad mode unchanged: the compiled graph is reused, not recompiled
    return StepResult(loss.detach(), grads, buffers, params, loss2)


def compare_steps(got: StepResult, want: StepResult, tol: dict = GRAD_TOL) -> dict[str, float]:
    """Raise Mismatch on the first difference beyond `tol`; return the max error per group."""
    errs = {"loss": assert_close("loss", got.loss, want.loss, tol)}
    errs["grads"] = max([0.0] + [assert_close(f"grad of {n}", got.grads[n], g, tol) for n, g in want.grads.items()])
    errs["buffers"] = max(
        [0.0] + [assert_close(f"buffer {n}", got.buffers[n], b, tol) for n, b in want.buffers.items()]
    )
    errs["params"] = max(
        [0.0] + [assert_close(f"parameter {n} after step", got.params[n], p, tol) for n, p in want.params.items()]
    )
    errs["loss after step"] = assert_close("loss after the optimizer step", got.loss2, want.loss2, tol)
    return errs


def twin(model):
    """An identical copy of a module (a function is returned as it is)."""
    return copy.deepcopy(model) if isinstance(model, nn.Module) else model


# -- timing --------------------------------------------------------------------------------------


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare_speed(eager: Callable[[], object], compiled: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median seconds of (eager, compiled), timed in alternation so a change of machine load hits both alike."""
    eager(), compiled()  # warm-up
    te, tc = [], []
    for _ in range(repeats):
        for fn, times in ((eager, te), (compiled, tc)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(te), statistics.median(tc)
