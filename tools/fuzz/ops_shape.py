"""Views and data movement: reshape, permute, slices with steps, select, expand, cat/stack, split, pad, flip, repeat."""

from hypothesis import strategies as st

from .builder import Builder, tup
from .programs import DTYPE_NAMES, Op


def reshape(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    n = t.numel()
    shape = _factor(b, n)
    if shape is None:
        return None
    if shape and n and b.draw(st.booleans()):
        shape[b.draw(st.integers(0, len(shape) - 1))] = -1
    f = b.draw(st.sampled_from(("reshape", "view", "flatten", "unflatten")))
    if f == "flatten" and t.dim():
        a = b.draw(st.integers(0, t.dim() - 1))
        return Op("flatten", (x,), f"{{0}}.flatten({a}, {b.draw(st.integers(a, t.dim() - 1))})")
    if f == "unflatten" and t.dim() and shape and n:
        d = b.dim(t)
        inner = _factor(b, t.shape[d])
        return Op("unflatten", (x,), f"{{0}}.unflatten({d}, {tup(inner)})") if inner else None
    return Op(f, (x,), f"{{0}}.{'view' if f == 'view' else 'reshape'}({tup(shape)})")


def _factor(b: Builder, n: int) -> list[int] | None:
    rank = b.draw(st.sampled_from((2, 1, 3, 0, 4)))
    if n == 0:
        return [0] + [b.draw(st.sampled_from((2, 1, 3))) for _ in range(max(rank - 1, 0))]
    out, left = [], n
    for _ in range(max(rank - 1, 0)):
        divs = [d for d in range(1, left + 1) if left % d == 0]
        d = b.draw(st.sampled_from(divs))
        out.append(d)
        left //= d
    return out + [left] if rank else ([] if n == 1 else None)


def permute(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() >= 2)
    if x is None:
        return None
    t = b.val(x)
    f = b.draw(st.sampled_from(("permute", "transpose", "t", "movedim")))
    if f == "permute":
        return Op("permute", (x,), f"{{0}}.permute{tup(b.draw(st.permutations(range(t.dim()))))}")
    if f == "t" and t.dim() == 2:
        return Op("t", (x,), "{0}.t()")
    return Op(f, (x,), f"{{0}}.{f}({b.dim(t)}, {b.dim(t)})")


def slice_(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    d = b.draw(st.integers(0, t.dim() - 1))
    n = t.shape[d]
    start = b.draw(st.integers(-n - 1, n + 1))
    stop = b.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    step = b.draw(st.sampled_from((1, 2, 3)))
    if b.draw(st.booleans()) and step == 1 and 0 <= start < n:
        return Op("narrow", (x,), f"{{0}}.narrow({d}, {start}, {b.draw(st.integers(0, n - start))})")
    s = f"{start}:{'' if stop is None else stop}" + (f":{step}" if step != 1 else "")
    return Op("slice", (x,), f"{{0}}[{':, ' * d}{s}]")


def select(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0 and min(t.shape) > 0)
    if x is None:
        return None
    t = b.val(x)
    d = b.draw(st.integers(0, t.dim() - 1))
    i = b.draw(st.integers(-t.shape[d], t.shape[d] - 1))
    return Op("select", (x,), f"{{0}}[{':, ' * d}{i}]" if b.draw(st.booleans()) else f"{{0}}.select({d}, {i})")


def unsqueeze(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    if b.draw(st.booleans()) and 1 in t.shape:
        d = b.draw(st.sampled_from([i for i, n in enumerate(t.shape) if n == 1]))
        return Op("squeeze", (x,), f"{{0}}.squeeze({d})" if b.draw(st.booleans()) else "{0}.squeeze()")
    return Op("unsqueeze", (x,), f"{{0}}.unsqueeze({b.draw(st.integers(-t.dim() - 1, t.dim()))})")


def expand(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    lead = [b.draw(st.sampled_from((2, 3, 1)))] if b.draw(st.integers(0, 2)) == 0 else []
    shape = lead + [
        b.draw(st.sampled_from((3, 2, 5, 1))) if n == 1 else (-1 if b.draw(st.booleans()) else n) for n in t.shape
    ]
    f = b.draw(st.sampled_from(("expand", "broadcast_to")))
    return Op(f, (x,), f"{{0}}.expand{tup(shape)}" if f == "expand" else f"torch.broadcast_to({{0}}, {tup(shape)})")


def cat(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    d = b.draw(st.integers(0, t.dim() - 1))
    f = b.draw(st.sampled_from(("cat", "stack", "self")))
    if f == "self":
        return Op("cat", (x,), f"torch.cat([{{0}}, {{0}}], dim={d})")
    if f == "stack":
        y = b.pick(lambda u: u.shape == t.shape) if b.draw(st.booleans()) else None
        y = b.fresh(t.shape, DTYPE_NAMES[t.dtype]) if y is None else y
        return Op("stack", (x, y), f"torch.stack([{{0}}, {{1}}], dim={b.draw(st.integers(-t.dim() - 1, t.dim()))})")
    shape = list(t.shape)
    shape[d] = b.draw(st.sampled_from((1, 2, 0, 3)))
    y = b.pick(lambda u: list(u.shape) == shape) if b.draw(st.booleans()) else None
    y = b.fresh(shape, DTYPE_NAMES[t.dtype] if b.draw(st.integers(0, 3)) else None) if y is None else y
    return Op(
        "cat",
        (x, y),
        f"torch.cat([{{0}}, {{1}}], dim={d})" if b.draw(st.booleans()) else f"torch.cat([{{1}}, {{0}}], dim={d})",
    )


def split(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    d = b.draw(st.integers(0, t.dim() - 1))
    k = b.draw(st.sampled_from((2, 1, 3)))
    pieces = max(1, -(-t.shape[d] // k)) if t.shape[d] else 1
    i = b.draw(st.integers(-pieces, pieces - 1))
    f = b.draw(st.sampled_from(("split", "chunk", "unbind")))
    if f == "unbind" and t.shape[d]:
        return Op("unbind", (x,), f"{{0}}.unbind({d})[{b.draw(st.integers(-t.shape[d], t.shape[d] - 1))}]")
    return Op(f, (x,), f"torch.{f if f != 'unbind' else 'split'}({{0}}, {k}, dim={d})[{i}]")


def movement(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    f = b.draw(st.sampled_from(("flip", "roll", "repeat", "pad", "tril", "diagonal", "unfold", "contiguous", "clone")))
    d = b.draw(st.integers(0, t.dim() - 1))
    if f == "flip":
        return Op("flip", (x,), f"{{0}}.flip({tup(b.dims(t) or (d,))})")
    if f == "roll":
        return Op("roll", (x,), f"torch.roll({{0}}, {b.draw(st.integers(-3, 3))}, {d})")
    if f == "repeat":
        reps = [b.draw(st.sampled_from((1, 2, 3))) for _ in range(t.dim() + b.draw(st.integers(0, 1)))]
        return Op("repeat", (x,), f"{{0}}.repeat{tup(reps)}")
    if f == "pad":
        k = b.draw(st.integers(1, min(t.dim(), 3)))
        pads = [b.draw(st.integers(-1, 2)) for _ in range(2 * k)]
        return Op("pad", (x,), f"F.pad({{0}}, {tup(pads)}, value={b.scalar(t)!r})")
    if f in ("tril", "diagonal") and t.dim() >= 2:
        k = b.draw(st.integers(-2, 2))
        return Op(
            f,
            (x,),
            f"torch.tril({{0}}, {k})" if f == "tril" else f"torch.diagonal({{0}}, {k}, {d}, {(d + 1) % t.dim()})",
        )
    if f == "unfold" and t.shape[d]:
        return Op(
            "unfold", (x,), f"{{0}}.unfold({d}, {b.draw(st.integers(1, t.shape[d]))}, {b.draw(st.integers(1, 3))})"
        )
    return Op(f, (x,), "{0}.contiguous()" if f == "contiguous" else "{0}.clone()")


FAMILIES = (
    ("reshape", reshape, 3),
    ("permute", permute, 2),
    ("slice", slice_, 3),
    ("select", select, 1),
    ("unsqueeze", unsqueeze, 1),
    ("expand", expand, 2),
    ("cat", cat, 2),
    ("split", split, 1),
    ("movement", movement, 2),
)
