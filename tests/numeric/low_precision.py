"""Judging bfloat16 and float16 results the way low precision must be judged: against a float64 reference, by
no more error than eager's own, never by bit-equality with eager (issue 52 item 6).

    assert_low_precision_close(got, eager, ref64, dtype)   # raises LowPrecisionMismatch naming the output

`got` (irc's result), `eager` (eager's result in the low precision) and `ref64` (the same computation in float64
on the same inputs, upcast exactly) are tensors or nested lists, tuples and dicts of them. Each tensor leaf must
pass two rules, the same rule measured in two units (`dtype`: the precision the result was computed in, by
default the leaf's own dtype; eps(dtype): its unit in the last place at 1.0, 2^-7 for bf16, 2^-10 for f16):

 1. absolute, per output:   max|got - ref64| <= FACTOR * max|eager - ref64| + floor,
                            floor = FLOOR_ULPS * eps(dtype) * max|ref64|;
 2. per element, in units of each value's own ulp, u(x) = |x - ref64| / (eps(dtype) * max(|ref64|, s)), where
    s = REL_SPAN * max|ref64| is the scale below which a value counts as near zero:
                            max u(got) <= FACTOR * max u(eager) + FLOOR_ULPS.

FACTOR = 1.5: eager's error is one sample of the rounding error of one valid evaluation order; irc may sum in
another order, fuse, or keep an intermediate in float32 where eager rounds it. Half as much error again as
eager's own is room for a different, equally valid order; a wrong formula costs far more, and so does an extra
rounding to the narrow type where values cancel (rule 2). What the floor admits, it cannot see: a rounding that
costs well under an ulp (a scalar operand rounded to the dtype) needs a test of its own (test_low_precision_ops.py).

FLOOR_ULPS = 1: where eager's error is tiny by luck (an output of one element, an exact op, values that happen to
be representable), 1.5x of nearly nothing would demand eager's bits. A result rounded faithfully (computed in
float32 and rounded once, in either direction) is within one ulp of the true value, and ulp(x) <= eps * |x| for a
normal x: one unit of eps at the value's scale admits it, on every element, and nothing coarser.

Why rule 2: rule 1 alone is decided by an output's largest values, where eager's error is largest; an extra
rounding that shows only where a value is small (a sum that cancels, x + v * a / b near zero) would hide under
it. Rule 2 judges each value in its own ulps, and values more than 1/REL_SPAN = 256 below the output's largest in
ulps at that scale: float32 summation-order noise (about n * 2^-24 of the largest) stays far below one narrow ulp
there, so only roundings in the narrow type can exceed it. An explicit `floor=` (the caller knows the output's
scale: a gradient that is rounding noise around an exact zero, a parameter after a step) applies to both rules:
values below floor / eps count as near zero too.

Rule 2 is for a result one computation away from exact inputs (an op, as the OpInfo sweep runs it), whose error
is its own rounding. It does not fit the output of many layers (a model's logits, its gradients): there an
element's error is the sum of its inputs' errors through the layers, which scales with the magnitudes of the terms
summed, not with the element's value, so that a logit near zero is tens of ulps off in eager and in irc alike,
by amounts that compare by chance; those callers pass per_element=False and are judged by rule 1.

A run that takes decisions of its own (a ReLU's mask, the sign of a narrow activation within rounding of zero) is
judged against a reference of its own: the float64 computation that takes the same decisions. `eager_ref=` is
eager's, `ref64` irc's; each error is measured from its own reference, so a decision that rounding flipped
differently in the two runs does not count as error of either, and every other error still does.

float64 results have no wider reference: their floor is F64_RTOL of the largest value (torch.testing's float64
rtol) and rule 2 does not apply.

Elements where eager or the reference is not finite (an overflow of float16, a nan) are outside both rules; there
irc must give eager's value (nan where eager has nan, the same infinity), the reference's, or, where irc avoided
the overflow, a finite value within rule 1's bound. A non-floating leaf (indices, masks) must equal, element by
element, eager's or the reference's value. Shapes, dtypes and layouts must be eager's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.utils._pytree import tree_flatten

FACTOR = 1.5
FLOOR_ULPS = 1
REL_SPAN = 2.0**-8
F64_RTOL = 1e-7


class LowPrecisionMismatch(AssertionError):
    """irc's low-precision result is further from the float64 reference than eager's allows."""


def eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps


def _scale(r: torch.Tensor) -> float:
    finite = r[torch.isfinite(r)]
    return finite.abs().max().item() if finite.numel() else 0.0


def default_floor(ref64: torch.Tensor, dtype: torch.dtype) -> float:
    """Rule 1's floor: FLOOR_ULPS units of eps(dtype) at the reference's largest finite value (float64: F64_RTOL)."""
    return (F64_RTOL if dtype == torch.float64 else FLOOR_ULPS * eps(dtype)) * _scale(ref64.detach().double())


def _real64(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.is_complex():
        return torch.view_as_real(t.to(torch.complex128))
    return t.to(torch.float64)


def _real_dtype(dtype: torch.dtype) -> torch.dtype:
    return {torch.complex32: torch.float16, torch.complex64: torch.float32, torch.complex128: torch.float64}.get(
        dtype, dtype
    )


@dataclass
class Rule:
    """One rule's measurement: irc's and eager's largest error in the rule's unit, its bound, the worst element."""

    name: str
    units: str
    got: float
    eager: float
    floor: float
    over: int  # elements over the bound
    worst: int  # flat index of irc's largest error

    @property
    def bound(self) -> float:
        return FACTOR * self.eager + self.floor

    @property
    def ratio(self) -> float:
        return self.got / self.bound if self.bound else (math.inf if self.got else 0.0)


def _rule(name, units, err_got, err_eager, judged, unit, floor) -> Rule:
    got_u = torch.where(judged, torch.nan_to_num(err_got / unit, nan=math.inf), torch.zeros_like(err_got))
    eager_max = (err_eager / unit)[judged].max().item()
    bound = FACTOR * eager_max + floor
    return Rule(name, units, got_u.max().item(), eager_max, floor, int((got_u > bound).sum()), int(got_u.argmax()))


def measure(
    g: torch.Tensor, e: torch.Tensor, r: torch.Tensor, dtype, floor=None, per_element=True, re=None
) -> list[Rule]:
    """The rules of the module docstring on float64 views of irc's, eager's and the reference's values (`re`:
    eager's own reference, where its run took decisions of its own; default r)."""
    re = r if re is None else re
    judged = torch.isfinite(e) & torch.isfinite(r) & torch.isfinite(re)
    if not bool(judged.any()):
        return []
    err_got, err_eager = (g - r).abs(), (e - re).abs()
    floor1 = default_floor(r, dtype) if floor is None else floor
    rules = [_rule("max error", "", err_got, err_eager, judged, 1.0, floor1)]
    if per_element and dtype != torch.float64:
        near_zero = max(REL_SPAN * _scale(r), 0.0 if floor is None else floor / eps(dtype))
        if near_zero > 0:
            unit = eps(dtype) * r.abs().clamp(min=near_zero)
            rules.append(_rule("max error in ulps of each value", " ulp", err_got, err_eager, judged, unit, FLOOR_ULPS))
    return rules


def judge_tensor(got, eager, ref64, dtype=None, floor=None, per_element: bool = True, eager_ref=None) -> str | None:
    """None when `got` passes the rules of this module's docstring, else why not (with the worst element)."""
    if not isinstance(got, torch.Tensor):
        return f"a {type(got).__name__}, eager gives a tensor"
    if got.shape != eager.shape:
        return f"shape {list(got.shape)}, eager {list(eager.shape)}"
    if got.dtype != eager.dtype:
        return f"dtype {got.dtype}, eager {eager.dtype}"
    if got.layout != eager.layout:
        return f"layout {got.layout}, eager {eager.layout}"
    if eager.layout != torch.strided:  # sparse results: judged on their values
        got, eager, ref64 = got.to_dense(), eager.to_dense(), ref64.to_dense()
    eager_ref = ref64 if eager_ref is None else eager_ref
    if tuple(ref64.shape) != tuple(eager.shape) or tuple(eager_ref.shape) != tuple(eager.shape):
        raise ValueError(f"the reference has shape {list(ref64.shape)}, eager {list(eager.shape)}")
    if got.numel() == 0:
        return None
    if not (eager.is_floating_point() or eager.is_complex()):
        same = (got == eager) | (got == ref64.to(got.dtype))
        if bool(same.all()):
            return None
        i = int((~same).flatten().to(torch.uint8).argmax())
        g, e, r = (t.flatten()[i].item() for t in (got, eager, ref64))
        return (
            f"{int((~same).sum())} elements differ from both eager and the float64 reference"
            f" (first at flat index {i}: irc {g}, eager {e}, reference {r})"
        )

    dtype = dtype or _real_dtype(eager.dtype)
    g, e, r, re = _real64(got), _real64(eager), _real64(ref64), _real64(eager_ref)

    def at(i: int) -> str:
        vals = (t.flatten()[i].item() for t in (g, e, r))
        return "flat index {}: irc {:.6g}, eager {:.6g}, reference {:.6g}".format(i, *vals)

    rules = measure(g, e, r, dtype, floor, per_element, re)
    for rule in rules:
        if rule.over:
            return (
                f"{rule.name} {rule.got:.3g}{rule.units} vs the float64 reference > {FACTOR} x eager's"
                f" {rule.eager:.3g}{rule.units} + floor {rule.floor:.3g}{rule.units} = {rule.bound:.3g}{rule.units}"
                f" ({rule.over} of {g.numel()} elements over; worst at {at(rule.worst)})"
            )
    # Outside the rules: eager's value, the reference's, or a finite value within rule 1's bound
    judged = torch.isfinite(e) & torch.isfinite(r)
    bound = rules[0].bound if rules else default_floor(r, dtype) if floor is None else floor
    err = (g - r).abs()
    ok = (
        judged
        | (g == e)
        | (torch.isnan(g) & torch.isnan(e))
        | (g == r)
        | (torch.isnan(g) & torch.isnan(r))
        | (torch.isfinite(g) & torch.isfinite(r) & (err <= bound))
    )
    if bool(ok.all()):
        return None
    i = int((~ok).flatten().to(torch.uint8).argmax())
    return f"{int((~ok).sum())} elements where eager or the reference is not finite hold neither's value (at {at(i)})"


def _leaves(tree) -> tuple[list, object]:
    return tree_flatten(tree)


def worst_ratio(got, eager, ref64, dtype=None, per_element: bool = True) -> float:
    """The largest irc error / bound of either rule over the floating tensor leaves (over 1.0 fails; inf where
    the bound is 0 and irc's error is not): how close a passing result came to failing."""
    worst = 0.0
    for a, b, c in zip(_leaves(got)[0], _leaves(eager)[0], _leaves(ref64)[0]):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and b.is_floating_point()):
            continue
        if a.shape != b.shape or not b.numel():
            continue
        if b.layout != torch.strided:
            a, b, c = a.to_dense(), b.to_dense(), c.to_dense()
        rules = measure(_real64(a), _real64(b), _real64(c), dtype or _real_dtype(b.dtype), None, per_element)
        worst = max([worst] + [rule.ratio for rule in rules])
    return worst


def assert_low_precision_close(
    got, eager, ref64, dtype=None, *, floor=None, per_element: bool = True, where: str = "output", eager_ref=None
) -> None:
    """Raise LowPrecisionMismatch unless every tensor leaf of `got` passes judge_tensor against `eager` and
    `ref64` (same structure); `dtype` is the precision whose eps sets the unit (default: each eager leaf's own),
    `floor` an absolute floor replacing the default (a float, or a callable of the leaf index giving one),
    `per_element=False` leaves out rule 2 (see the module docstring for where it does not apply), `eager_ref` the
    reference of eager's own decisions where they differ from irc's (ref64 then is irc's; default: ref64 for both).
    Non-tensor leaves must equal eager's or the reference's."""
    g, gspec = _leaves(got)
    e, espec = _leaves(eager)
    r, rspec = _leaves(ref64)
    er, erspec = _leaves(ref64 if eager_ref is None else eager_ref)
    if gspec != espec:
        raise LowPrecisionMismatch(f"{where}: structure {gspec} differs from eager's {espec}")
    if rspec != espec or erspec != espec:
        raise ValueError(f"{where}: the reference's structure {rspec} differs from eager's {espec}")
    for i, (a, b, c, d) in enumerate(zip(g, e, r, er)):
        name = f"{where}[{i}]" if len(e) > 1 else where
        if isinstance(b, torch.Tensor):
            why = judge_tensor(a, b, c, dtype, floor(i) if callable(floor) else floor, per_element, d)
        elif isinstance(b, float) and isinstance(a, float):
            same = a == b or a == c or (math.isnan(a) and (math.isnan(b) or math.isnan(c)))
            why = None if same else f"{a!r}, eager {b!r}, reference {c!r}"
        else:
            why = None if type(a) is type(b) and (a == b or a == c) else f"{a!r}, eager {b!r}, reference {c!r}"
        if why:
            raise LowPrecisionMismatch(f"{name}: {why}")


def upcast(x, dtypes=(torch.bfloat16, torch.float16, torch.float32)):
    """`x` with every floating tensor of `dtypes` in it converted to float64 exactly (any nesting of lists,
    tuples and dicts), for the reference computation."""
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64) if x.dtype in dtypes else x.detach()
    if type(x) in (list, tuple):
        return type(x)(upcast(v, dtypes) for v in x)
    if type(x) is dict:
        return {k: upcast(v, dtypes) for k, v in x.items()}
    return x
