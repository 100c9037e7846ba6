"""Does irc compute what eager computes? Values within dtype tolerances, a float64 evaluation as the arbiter.

An element passes when it is close to eager's, or close to the float64 evaluation of the same
program (inputs widened to f64, the result cast back): where eager's own rounding flips a
comparison or a floor, irc may land on either side. Shapes and dtypes must match exactly.
"""

from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from irc.ir.compare import close_elements
from irc.ir.compare import compare as compare_results


def _leaves(x) -> list:
    return [t.detach() if isinstance(t, torch.Tensor) else t for t in tree_leaves(x)]


def widen(inputs: list) -> list:
    """The inputs with every floating tensor as float64 (same values, same requires_grad)."""
    out = []
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            w = t.detach().to(torch.float64)
            out.append(w.requires_grad_() if t.requires_grad else w)
        else:
            out.append(t)
    return out


def close(got, want, want64=None, what: str = "output") -> str | None:
    """None when `got` matches `want` (or `want64` where `want` disagrees), else how it differs."""
    return compare_results(
        _leaves(want), _leaves(got), None if want64 is None else _leaves(want64), what=what, ref="eager gives"
    )


def compare(fn: Callable, compiled: Callable, make_inputs: Callable, dtypes: list | None = None) -> str | None:
    """None when compiled(*inputs) matches fn(*inputs) (cast to `dtypes`, when given), else the first difference."""
    with torch.no_grad():
        want = fn(*make_inputs())
        got = compiled(*make_inputs())
        want64 = _run64(fn, make_inputs)
        if dtypes is not None:
            want = [w.to(d) if isinstance(w, torch.Tensor) else w for w, d in zip(_leaves(want), dtypes)]
            want64 = (
                None
                if want64 is None
                else [w.to(d) if isinstance(w, torch.Tensor) else w for w, d in zip(_leaves(want64), dtypes)]
            )
        return close(got, want, want64)


def meta_dtypes(fn: Callable, make_inputs: Callable) -> list | None:
    """The output dtypes torch's meta functions give, where they differ from eager's (else None): torch.compile
    types every graph by the meta functions, so no backend can give eager's dtype there (e.g. bool ** True is
    bool in eager and int64 in the meta)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with torch.no_grad():
            eager = _leaves(fn(*make_inputs()))
            with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                fake = _leaves(fn(*[mode.from_tensor(t) if isinstance(t, torch.Tensor) else t for t in make_inputs()]))
    except Exception:
        return None
    dtypes = [f.dtype if isinstance(f, torch.Tensor) else None for f in fake]
    same = len(eager) == len(fake) and all(
        not isinstance(e, torch.Tensor) or e.dtype == d for e, d in zip(eager, dtypes)
    )
    return None if same else dtypes


def _run64(fn, make_inputs):
    try:
        return fn(*widen(make_inputs()))
    except Exception:  # an op without a float64 kernel: eager alone decides
        return None


def gradients(fn: Callable, inputs: list) -> tuple[list, list]:
    """The outputs of fn and the gradients of the inputs that require grad, for fixed output weights."""
    outs = fn(*inputs)
    leaves = [o for o in tree_leaves(outs) if isinstance(o, torch.Tensor) and o.requires_grad]
    wrt = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    if not leaves or not wrt:
        return _leaves(outs), []
    g = torch.Generator().manual_seed(1)
    weights = [torch.randint(-8, 9, o.shape, generator=g).div(8).to(o.dtype) for o in leaves]
    grads = torch.autograd.grad(leaves, wrt, weights, allow_unused=True)
    return _leaves(outs), [torch.zeros_like(t) if d is None else d.detach() for t, d in zip(wrt, grads)]


def compare_training(fn: Callable, compiled: Callable, make_inputs: Callable) -> str | None:
    """compare() for the outputs, then the same for the gradients of every input with requires_grad."""
    want, want_grads = gradients(fn, make_inputs())
    got, got_grads = gradients(compiled, make_inputs())
    try:
        want64, want64_grads = gradients(fn, widen(make_inputs()))
    except Exception:
        want64, want64_grads = None, None
    return close(got, want, want64) or close(got_grads, want_grads, want64_grads, what="gradient")


def deterministic(fn: Callable, make_inputs: Callable, training: bool, runs: int = 8) -> bool:
    """Does eager give bitwise the same results (and gradients) every time? Some torch kernels read memory
    they never wrote (bf16 convolution_backward on CPU, torch 2.13): then neither eager nor irc can be judged."""

    def once(i):
        _dirty_the_allocator(3.0e38 if i % 2 else -7.0)
        if training:
            outs, grads = gradients(fn, make_inputs())
            return outs + grads
        with torch.no_grad():
            return _leaves(fn(*make_inputs()))

    first = once(0)
    for i in range(1, runs):
        again = once(i)
        for a, b in zip(first, again):
            if isinstance(a, torch.Tensor) and not torch.equal(torch.nan_to_num(a, 0.0), torch.nan_to_num(b, 0.0)):
                return False
    return True


def _dirty_the_allocator(value: float) -> None:
    """Free blocks of many sizes full of `value`, so a kernel that reads memory it never wrote sees it."""
    blocks = [torch.full((n,), value) for n in (1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128, 256, 1024, 4096)]
    del blocks


class _Nudge(TorchDispatchMode):
    """Every computed floating result one ulp towards `to` (views, copies and in-place ops left exact, so aliasing
    stays as it was): what another correct implementation of the same ops may give."""

    def __init__(self, to: float):
        super().__init__()
        self.to = to

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func._schema.is_mutable or any(a.alias_info is not None for a in func._schema.returns):
            return out
        return tree_map(
            lambda t: (
                torch.nextafter(t, torch.full_like(t, self.to))
                if isinstance(t, torch.Tensor) and t.is_floating_point()
                else t
            ),
            out,
        )


def ill_conditioned(fn: Callable, compiled: Callable, make_inputs: Callable, training: bool = False) -> bool:
    """Is every element where irc and eager differ one that eager itself moves past the tolerance when each of its
    intermediate results moves by one ulp (sin of exp(20) = 4.85e8: one ulp of the exp is 32 radians)? Such an
    element is not determined to the dtype's precision: an exp that is 1 ulp off (numpy's, Triton's interpreter)
    lands elsewhere, and neither answer is wrong. With `training`, the outputs and the gradients (the backward's
    intermediate results move too)."""

    def results(f, inputs):
        if training:
            outs, grads = gradients(f, inputs)
            return outs + grads
        with torch.no_grad():
            return _leaves(f(*inputs))

    want, got = results(fn, make_inputs()), results(compiled, make_inputs())
    try:
        moved = []
        for to in (float("inf"), float("-inf")):
            inputs = make_inputs()  # exact: only what is computed from them moves
            with _Nudge(to):
                moved.append(results(fn, inputs))
    except Exception:  # an op the nudge cannot follow: no verdict
        return False
    found = False
    for i, (g, w) in enumerate(zip(got, want)):
        if (
            not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor))
            or g.shape != w.shape
            or not w.is_floating_point()
        ):
            continue
        differ = ~close_elements(g, w)
        if not bool(differ.any()):
            continue
        unstable = torch.zeros_like(differ)
        for m in moved:
            unstable |= ~close_elements(m[i], w)
        if not bool(unstable[differ].all()):
            return False
        found = True
    return found
