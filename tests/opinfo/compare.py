"""Sample plumbing for the OpInfo sweep: tensors out of nested arguments and back, stride-preserving
clones, and a comparison of nested outputs (tensors with float32 tolerances, everything else as Python values)."""

import math

import torch


class Mismatch(AssertionError):
    """A compiled result differs from eager; the message says where and how."""


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


def split_tensors(tree):
    """(template, tensors): `tree` with every tensor inside lists, tuples and dicts replaced by a slot."""
    tensors: list[torch.Tensor] = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            tensors.append(x)
            return _Slot(len(tensors) - 1)
        if type(x) in (list, tuple):
            return type(x)(walk(v) for v in x)
        if type(x) is dict:
            return {k: walk(v) for k, v in x.items()}
        return x

    return walk(tree), tensors


def fill(template, tensors):
    """The inverse of split_tensors (traced by Dynamo inside the compiled function)."""
    if isinstance(template, _Slot):
        return tensors[template.i]
    if type(template) is list:
        return [fill(v, tensors) for v in template]
    if type(template) is tuple:
        return tuple(fill(v, tensors) for v in template)
    if type(template) is dict:
        return {k: fill(v, tensors) for k, v in template.items()}
    return template


def clone_preserving_strides(t: torch.Tensor) -> torch.Tensor:
    """A copy with t's sizes, strides and storage offset (expanded and overlapping views included); a
    copy of a tensor that requires grad is a leaf that requires grad (a view of a base that does not)."""
    t, grad = t.detach(), t.requires_grad
    if t.layout != torch.strided or t.numel() == 0:
        return t.clone().requires_grad_(grad)
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    base = torch.as_strided(t, (span,), (1,)).clone()
    return torch.as_strided(base, t.shape, t.stride()).requires_grad_(grad)


def clone_inputs(tensors):
    return [clone_preserving_strides(t) for t in tensors]


def _close(actual: torch.Tensor, expected: torch.Tensor, where: str, check_dtype: bool = True) -> None:
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, check_dtype=check_dtype, check_stride=False)
    except AssertionError as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        detail = "; ".join(ln for ln in lines if ln.startswith(("Mismatched", "Greatest", "The values"))) or lines[0]
        raise Mismatch(f"values at {where}: {detail}") from None


def assert_same(actual, expected, where: str = "output") -> None:
    """Raise Mismatch unless `actual` matches `expected` (a dtype-only difference says 'dtype' first)."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Mismatch(f"type at {where}: {type(actual).__name__}, eager gives a tensor")
        if actual.shape != expected.shape:
            raise Mismatch(f"shape at {where}: {list(actual.shape)}, eager {list(expected.shape)}")
        if actual.dtype != expected.dtype:
            _close(actual, expected, where, check_dtype=False)
            raise Mismatch(f"dtype at {where}: {actual.dtype}, eager {expected.dtype} (values equal)")
        _close(actual, expected, where)
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise Mismatch(
                f"structure at {where}: {type(actual).__name__} vs eager {type(expected).__name__} of {len(expected)}"
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or actual.keys() != expected.keys():
            raise Mismatch(f"structure at {where}: keys differ")
        for k in expected:
            assert_same(actual[k], expected[k], f"{where}[{k!r}]")
        return
    if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
        return
    if type(actual) is not type(expected) or actual != expected:
        raise Mismatch(f"value at {where}: {actual!r}, eager {expected!r}")
