"""Reductions and scans over random dims, with and without keepdim, and the softmax family."""

from hypothesis import strategies as st

from .builder import Builder, tup
from .programs import Op

MULTI_DIM = (
    "torch.sum",
    "torch.mean",
    "torch.amax",
    "torch.amin",
    "torch.logsumexp",
    "torch.var",
    "torch.std",
    "torch.any",
    "torch.all",
    "torch.nansum",
    "torch.count_nonzero",
    "torch.linalg.vector_norm",
)
ONE_DIM = ("torch.argmax", "torch.argmin", "torch.prod", "max", "min", "torch.median")
SCANS = ("torch.softmax", "torch.log_softmax", "torch.cumsum", "torch.cumprod", "torch.logcumsumexp", "torch.cummax")
FULL = ("sum", "mean", "amax", "prod", "max", "min", "any", "all", "argmax", "std", "norm")


def reduction(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    f = b.draw(st.sampled_from(MULTI_DIM))
    dims = b.dims(t)
    if t.dim() and dims and b.draw(st.integers(0, 3)) == 0:
        dims = tuple(d - t.dim() for d in dims)  # negative dims
    keep = b.draw(st.booleans())
    extra = ""
    if f in ("torch.var", "torch.std"):
        extra = f", correction={b.draw(st.sampled_from((1, 0, 2)))}"
    if f == "torch.count_nonzero":
        return Op("count_nonzero", (x,), f"{f}({{0}}, dim={tup(dims)})")
    if f == "torch.linalg.vector_norm":
        extra = f", ord={b.draw(st.sampled_from((2, 1, float('inf'), 3)))!r}"
    return Op(f.split(".")[-1], (x,), f"{f}({{0}}, dim={tup(dims)}, keepdim={keep}{extra})")


def reduction_one(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    f = b.draw(st.sampled_from(ONE_DIM))
    d, keep = b.dim(t), b.draw(st.booleans())
    if f in ("max", "min"):
        part = b.draw(st.sampled_from(("values", "indices")))
        return Op(f"{f}.dim", (x,), f"torch.{f}({{0}}, dim={d}, keepdim={keep}).{part}")
    if f == "torch.median":
        return Op("median", (x,), f"torch.median({{0}}, dim={d}, keepdim={keep}).values")
    return Op(f.split(".")[-1], (x,), f"{f}({{0}}, dim={d}, keepdim={keep})")


def full_reduction(b: Builder) -> Op | None:
    x = b.pick()
    f = b.draw(st.sampled_from(FULL))
    return Op(f"{f}.all", (x,), f"{{0}}.{f}()")


def scan(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    f = b.draw(st.sampled_from(SCANS))
    d = b.dim(t)
    if f == "torch.cummax":
        return Op("cummax", (x,), f"torch.cummax({{0}}, dim={d}).{b.draw(st.sampled_from(('values', 'indices')))}")
    return Op(f.split(".")[-1], (x,), f"{f}({{0}}, dim={d})")


FAMILIES = (
    ("reduction", reduction, 4),
    ("reduction_one", reduction_one, 2),
    ("full_reduction", full_reduction, 1),
    ("scan", scan, 2),
)
