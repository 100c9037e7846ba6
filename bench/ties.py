"""Rounding ties: a training step where irc and eager differ beyond the tolerance passes only where float64 steps
show the difference is one element on either side of a kink.

A kink (ReLU at 0, a clamp's bounds, a comparison's threshold, maximum where its operands are equal) turns a value
into a decision: an input within float32 rounding of it may land on either side depending on the order of a sum,
and that one mask element can move a gradient past the tolerance while every value agrees to rounding (the demo
ConvNet's second ReLU, 5.3e-8 from 0 in eager, 0 in irc on a Xeon). judge_step tells such a tie from a real
difference with float64 steps: the step as computed, then steps with one near-kink element on its other side.
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from .check import GRAD_TOL, Mismatch, StepResult, compare_steps, loss_fn, train_step, twin

# Near a kink: 0 < |x - kink| <= NEAR * s, s the largest magnitude among the op's operands and kink points. A float32
# value of magnitude s comes from terms about that large, each rounded to half an ulp (2**-24 s), and BatchNorm's
# statistics and long sums add a few more: eager's float32 inputs of the demo ConvNet's ReLUs were at most 3.1 ulps of
# their tensor's largest value from float64 (2.8e-6 at 7.6; 17-23 ulps of the RMS). NEAR = 1e-6 is 8.4 ulps (2**-23 =
# 1.19e-7): room for another summation order's error beside eager's. It bounds where a tie is looked for, not the
# verdict: a flipped float64 step must still match. An element exactly at its kink in float64 is left alone: that is
# structure (zeros an earlier ReLU made), which no rounding moves.
NEAR = 1e-6
TIE_TRIES = 8  # float64 steps with one element flipped, the closest to its kink first (the demo ConvNet's: 3 s each)

_A = torch.ops.aten
# each op's kink points on its first operand: a number, or the name of the argument holding one (a number; or a
# tensor, where the kink is the two operands being equal). Not covered: max_pool, max/min/amax reductions, sort, topk
_KINKS = {
    **dict.fromkeys((_A.relu, _A.relu_, _A.leaky_relu, _A.leaky_relu_, _A.abs, _A.abs_, _A.sign, _A.sgn), (0.0,)),
    **dict.fromkeys((_A.threshold, _A.threshold_), ("threshold",)),
    **dict.fromkeys((_A.clamp, _A.clamp_), ("min", "max")),
    **dict.fromkeys((_A.clamp_min, _A.clamp_min_), ("min",)),
    **dict.fromkeys((_A.clamp_max, _A.clamp_max_), ("max",)),
    **dict.fromkeys((_A.hardtanh, _A.hardtanh_), ("min_val", "max_val")),
    **dict.fromkeys((_A.gt, _A.ge, _A.lt, _A.le, _A.maximum, _A.minimum, _A.max, _A.min, _A.fmax, _A.fmin), ("other",)),
}
# ops whose derivative on the kink is neither side's (abs' 0, maximum's half to each): a rounding may land there too
_ONTO = {_A.abs, _A.abs_, _A.sign, _A.sgn, _A.maximum, _A.minimum, _A.max, _A.min, _A.fmax, _A.fmin}


def _arg(func, args: tuple, kwargs: dict, name: str):
    for i, a in enumerate(func._schema.arguments):
        if a.name == name:
            return args[i] if i < len(args) else kwargs.get(name, a.default_value)
    return None  # an overload without it (max.dim): no kink


@dataclass(frozen=True, order=True)
class Near:
    """An element near a kink in a float64 step: in the `call`-th kink op run with grad enabled, its `kink`-th point."""

    closeness: float  # |x - kink| / s: the order they are tried in
    call: int
    kink: int
    index: tuple[int, ...]
    onto: bool  # put on the kink itself, not on its other side: where the derivative there is neither side's
    what: str  # "a relu input 5.7e-09 from its kink at 0"

    def moved(self) -> str:
        return "exactly on its kink" if self.onto else "on the other side"


class Kinks(TorchDispatchMode):
    """Records the elements near a kink in the ops run with grad enabled (the forwards; not the backward, nor the
    optimizer's no_grad step), or puts the element `flip` on the other side of its kink: the operand is mirrored in
    place (x -> 2 kink - x, or x -> kink), so every later read, the backward's saved tensors included, follows."""

    def __init__(self, flip: Near | None = None, keep: int = TIE_TRIES):
        super().__init__()
        self.flip, self.keep = flip, keep
        self.near: list[Near] = []  # the `keep` closest of each op
        self.count = 0  # elements near a kink in all
        self.calls = 0
        self.flipped = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        points = _KINKS.get(func.overloadpacket)
        x = args[0] if args else None
        if points and torch.is_grad_enabled() and isinstance(x, torch.Tensor) and x.is_floating_point():
            self._visit(
                func.overloadpacket,
                x,
                [_arg(func, args, kwargs, p) if isinstance(p, str) else p for p in points],
            )
        return func(*args, **kwargs)

    def _visit(self, op, x: torch.Tensor, points: list) -> None:
        call, self.calls = self.calls, self.calls + 1
        for k, point in enumerate(points):
            tensor = isinstance(point, torch.Tensor)
            if point is None or isinstance(point, bool) or (tensor and not point.is_floating_point()):
                continue
            if self.flip is not None and (self.flip.call, self.flip.kink) != (call, k):
                continue
            diff = x - point
            scale = max(x.abs().max().item(), point.abs().max().item() if tensor else abs(point))
            # the operand to mirror (x - kink changes sign either way): one holding each element of the broadcast once
            operands = [(x, 1), (point, -1)] if tensor else [(x, 1)]
            whole = [
                (t, sign) for t, sign in operands if t.shape == diff.shape and torch._debug_has_internal_overlap(t) == 0
            ]
            target = whole[0] if whole else None
            if self.flip is not None:
                if target is not None:
                    t, sign = target
                    # x - kink is exact where the two lie within a factor 2 (Sterbenz) or the kink is 0: then x lands
                    # exactly on the kink, or at the same distance on its other side
                    t.data[self.flip.index] -= sign * (1 if self.flip.onto else 2) * diff[self.flip.index]
                    self.flipped = True
                continue
            dist = diff.abs().flatten()
            near = (dist > 0) & (dist <= NEAR * scale)
            if target is None or not (n := int(near.sum())):
                continue
            self.count += n
            closest = dist.where(near, torch.inf).topk(min(n, self.keep), largest=False)
            for d, i in zip(closest.values.tolist(), closest.indices.tolist()):
                name = f"{'an' if op.__name__[0] in 'aeiou' else 'a'} {op.__name__}"
                what = (
                    f"{name}'s operands {d:.2g} apart" if tensor else f"{name} input {d:.2g} from its kink at {point:g}"
                )
                index = tuple(int(j) for j in torch.unravel_index(torch.tensor(i), diff.shape))
                for onto in (False, True) if op in _ONTO else (False,):
                    self.near.append(Near(d / scale, call, k, index, onto, what))


@dataclass
class Verdict:
    errs: dict[str, float]  # max abs error per group: irc against eager, or for a tie against irc's float64 step
    tie: str | None = None  # why a difference beyond the tolerance is a rounding tie


def judge_step(
    model: nn.Module,
    inputs: tuple,
    target: torch.Tensor,
    got: StepResult,
    want: StepResult,
    optimizer: str = "sgd",
    tol: dict = GRAD_TOL,
    tries: int = TIE_TRIES,
) -> Verdict:
    """compare_steps(got, want); where they differ beyond `tol`, float64 steps of `model` (as it was before either
    step) decide whether that is a rounding tie: irc (got) and eager (want) each match a float64 step, a different one,
    the two differing only in which side of its kink one element within float32 rounding of it lies. Otherwise raises
    the Mismatch, with why it is no tie. The float64 steps run eagerly: the verdict depends on no vendor or ISA."""
    try:
        return Verdict(compare_steps(got, want, tol))
    except Mismatch as e:
        mismatch = e
    verdict, why = _rounding_tie(model, inputs, target, got, want, optimizer, tol, tries)
    if verdict is None:
        raise Mismatch(f"{mismatch}; not a rounding tie: {why}") from None
    return verdict


def _step64(model: nn.Module, inputs: tuple, target: torch.Tensor, optimizer: str, mode: Kinks) -> StepResult:
    m = twin(model).double()
    wide = tuple(x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs)
    with mode:
        return train_step(m, wide, loss_fn(m), target, optimizer)


def _errors(result: StepResult, run: StepResult, tol: dict) -> dict[str, float] | None:
    """compare_steps of `result` against a float64 step cast to its dtypes; None where they differ beyond `tol`."""

    def cast(ts: dict, like: dict) -> dict:
        return {n: t.to(like[n].dtype) if n in like else t for n, t in ts.items()}

    dt = result.loss.dtype
    run = StepResult(
        run.loss.to(dt),
        cast(run.grads, result.grads),
        cast(run.buffers, result.buffers),
        cast(run.params, result.params),
        run.loss2.to(dt),
    )
    try:
        return compare_steps(result, run, tol)
    except Mismatch:
        return None


def _rounding_tie(model, inputs, target, got, want, optimizer, tol, tries) -> tuple[Verdict | None, str]:
    record = Kinks(keep=tries)
    try:
        steps = [(None, _step64(model, inputs, target, optimizer, record))]
    except Exception as e:  # noqa: BLE001 - an op without a float64 kernel: no arbiter, no tie
        return None, f"the float64 step failed ({type(e).__name__}: {e})"
    near = sorted(record.near)[:tries]
    if not near:
        return (
            None,
            "no element of the float64 step lies within float32 rounding of a kink (relu, clamp, a comparison...)",
        )

    def steps_tried():
        yield from steps
        for n in near:
            mode = Kinks(flip=n)
            step = _step64(model, inputs, target, optimizer, mode)
            if mode.flipped:
                yield n, step

    def on(flip: Near | None, alone: bool = False) -> str:
        if flip is None:
            return "the float64 step as computed"
        return f"the float64 step with {'that element' if alone else flip.what} {flip.moved()}"

    sides: dict[str, tuple[Near | None, dict]] = {}  # irc or eager -> the step it matches and the other does not
    for flip, step in steps_tried():
        mine, theirs = _errors(got, step, tol), _errors(want, step, tol)
        if (mine is None) != (theirs is None):
            sides.setdefault("irc" if mine is not None else "eager", (flip, mine or theirs))
        if len(sides) == 2:
            break
    else:
        found = (
            "; ".join(f"{who} matches {on(flip)}" for who, (flip, _) in sides.items()) or "neither matches one alone"
        )
        return None, (
            f"of the float64 step and {len(near)} with one of the {record.count} elements near a kink moved "
            f"(the closest first), {found}"
        )
    (mine, e_irc), (theirs, e_eager) = sides["irc"], sides["eager"]
    flipped = [f.what for f in (mine, theirs) if f is not None]
    alone = len(flipped) == 1
    tie = (
        f"rounding tie: {' and '.join(flipped)} in float64, within float32 rounding; irc and eager take different "
        f"sides: irc matches {on(mine, alone)}, eager {on(theirs, alone)} "
        f"(max abs errors {max(e_irc.values()):.2g} and {max(e_eager.values()):.2g})"
    )
    return Verdict(e_irc, tie), ""
