"""Do two runs of a program give the same results? Floats within a tolerance per dtype, everything else exactly.

Used by the per-pass check (the IR before a pass against the IR after it) and by the fuzzer's oracle (irc against
eager, with a float64 evaluation of the same program as the arbiter where eager's own rounding is the outlier).
"""

from collections.abc import Mapping, Sequence

import torch

Tolerances = Mapping[torch.dtype, tuple[float, float]]

TOLERANCES: Tolerances = {  # (rtol, atol) per dtype; exact for the rest
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}

# An f32 program run widened to f64 keeps its f32-rounded constants (1/sqrt(2) in gelu) where a pass may compute
# them anew in f64, so its f64 results agree only to about f32's precision.
WIDENED_F32: Tolerances = {**TOLERANCES, torch.float64: (1e-5, 1e-6)}


def close_elements(got: torch.Tensor, want: torch.Tensor, tolerances: Tolerances = TOLERANCES) -> torch.Tensor:
    """Elementwise: is `got` within `want`'s dtype tolerance of `want` (NaN matching NaN), or equal for exact dtypes?"""
    if want.is_floating_point() or want.is_complex():
        rtol, atol = tolerances.get(want.dtype, (0.0, 0.0))
        return torch.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return got == want


def compare(
    want: Sequence,
    got: Sequence,
    want64: Sequence | None = None,
    *,
    what: str = "result",
    ref: str = "was",
    tolerances: Tolerances = TOLERANCES,
) -> str | None:
    """None when `got` matches `want` (an element may instead match `want64`, the float64 evaluation cast back),
    else how the first differing result differs. `what` names a result, `ref` introduces the expected value."""
    if len(got) != len(want):
        return f"{len(got)} {what}s instead of {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        w64 = want64[i] if want64 is not None and i < len(want64) else None
        if not isinstance(w, torch.Tensor) or not isinstance(g, torch.Tensor):
            if g != w:
                return f"{what} {i} is {g!r}, {ref} {w!r}"
            continue
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"{what} {i} is {g.dtype} {list(g.shape)}, {ref} {w.dtype} {list(w.shape)}"
        ok = close_elements(g, w, tolerances)
        arbiter = isinstance(w64, torch.Tensor) and w64.shape == w.shape
        if arbiter:
            ok |= close_elements(g, w64.to(w.dtype), tolerances)
        if not bool(ok.all()):
            idx = tuple(int(j) for j in (~ok).nonzero()[0])
            where = f" at {list(idx)}" if idx else ""
            also = f", float64 gives {w64[idx].item()}" if arbiter else ""
            return (
                f"{what} {i}{where} is {g[idx].item()}, {ref} {w[idx].item()}{also} "
                f"({int((~ok).sum())} of {ok.numel()} elements differ)"
            )
    return None
