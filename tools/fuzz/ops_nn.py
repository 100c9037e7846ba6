"""Matmul and convolution with consistent shapes, pooling, norms, indexing, creation, and in-place updates."""

from hypothesis import strategies as st

from .builder import Builder, tup
from .programs import DTYPE_NAMES, Op


def _float(t) -> bool:
    return t.is_floating_point()


def matmul(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() >= 1 and _float(t))
    if x is None:
        return None
    t = b.val(x)
    k = t.shape[-1]
    n = b.draw(st.sampled_from((3, 2, 1, 5, 0)))
    dt = DTYPE_NAMES[t.dtype]
    f = b.draw(st.sampled_from(("matmul", "linear") + {2: ("mm", "addmm"), 3: ("bmm",)}.get(t.dim(), ())))
    if f == "mm" and t.dim() == 2:
        return Op("mm", (x, b.fresh((k, n), dt)), "torch.mm({0}, {1})")
    if f == "bmm" and t.dim() == 3:
        return Op("bmm", (x, b.fresh((t.shape[0], k, n), dt)), "torch.bmm({0}, {1})")
    if f == "addmm" and t.dim() == 2:
        bias = b.fresh(b.draw(st.sampled_from(((n,), (t.shape[0], n), (1, n)))), dt)
        return Op(
            "addmm",
            (bias, x, b.fresh((k, n), dt)),
            f"torch.addmm({{0}}, {{1}}, {{2}}, beta={b.scalar(t)!r}, alpha={b.scalar(t)!r})",
        )
    if f == "linear":
        w = b.fresh((n, k), dt)
        if b.draw(st.booleans()):
            return Op("linear", (x, w, b.fresh((n,), dt)), "F.linear({0}, {1}, {2})")
        return Op("linear", (x, w), "F.linear({0}, {1})")
    batch = tuple(1 if b.draw(st.integers(0, 3)) == 0 else s for s in t.shape[:-2])
    rhs = (k,) if b.draw(st.integers(0, 4)) == 0 else (*batch, k, n)
    return Op("matmul", (x, b.fresh(rhs, dt)), "torch.matmul({0}, {1})" if b.draw(st.booleans()) else "({0} @ {1})")


def conv(b: Builder) -> Op | None:
    """conv1d/conv2d (and transposed) over a value viewed as [N, C, spatial...], with a fresh weight and bias."""
    x = b.pick(lambda t: _float(t) and t.numel() > 0)
    if x is None:
        return None
    t = b.val(x)
    two = b.draw(st.booleans())
    shape = _as_image(b, t.numel(), 4 if two else 3)
    if shape is None:
        return None
    c = shape[1]
    groups = b.draw(st.sampled_from([g for g in (1, 2, 3) if c % g == 0]))
    out = groups * b.draw(st.sampled_from((1, 2, 3)))
    ks = tuple(b.draw(st.sampled_from((1, 2, 3))) for _ in shape[2:])
    stride, pad, dil = b.draw(st.sampled_from((1, 2))), b.draw(st.sampled_from((0, 1))), b.draw(st.sampled_from((1, 2)))
    dt = DTYPE_NAMES[t.dtype]
    transposed = b.draw(st.integers(0, 3)) == 0
    w = b.fresh((c, out // groups, *ks) if transposed else (out, c // groups, *ks), dt)
    args = [x, w]
    bias = "None"
    if b.draw(st.booleans()):
        args.append(b.fresh((out,), dt))
        bias = "{2}"
    f = ("F.conv_transpose2d" if two else "F.conv_transpose1d") if transposed else ("F.conv2d" if two else "F.conv1d")
    return Op(
        f.split(".")[-1],
        tuple(args),
        f"{f}({{0}}.reshape{tup(shape)}, {{1}}, {bias}, stride={stride}, padding={pad}, dilation={dil}, groups={groups})",
    )


def _as_image(b: Builder, n: int, rank: int) -> tuple[int, ...] | None:
    divs = [d for d in range(1, n + 1) if n % d == 0]
    batch = b.draw(st.sampled_from([d for d in divs if d <= 2]))
    c = b.draw(st.sampled_from([d for d in divs if (n // batch) % d == 0 and d <= 6]))
    rest = n // batch // c
    if rank == 3:
        return (batch, c, rest)
    h = b.draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0]))
    return (batch, c, h, rest // h)


def pool(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() in (3, 4) and _float(t))
    if x is None:
        return None
    f = b.draw(st.sampled_from(("F.max_pool2d", "F.avg_pool2d", "F.adaptive_avg_pool2d")))
    if f == "F.adaptive_avg_pool2d":
        return Op(
            "adaptive_avg_pool2d", (x,), f"{f}({{0}}, {tup((b.draw(st.integers(1, 3)), b.draw(st.integers(1, 3))))})"
        )
    k = b.draw(st.sampled_from((2, 1, 3)))
    stride = b.draw(st.sampled_from((None, 1, 2)))
    pad = b.draw(st.integers(0, k // 2))
    ceil = b.draw(st.booleans())
    return Op(f.split(".")[-1], (x,), f"{f}({{0}}, {k}, stride={stride}, padding={pad}, ceil_mode={ceil})")


def norm(b: Builder) -> Op | None:
    x = b.pick(lambda t: t.dim() >= 1 and _float(t))
    if x is None:
        return None
    t = b.val(x)
    dt = DTYPE_NAMES[t.dtype]
    f = b.draw(st.sampled_from(("layer_norm", "batch_norm", "normalize", "rms_norm")))
    if f == "batch_norm" and t.dim() >= 2:
        return Op("batch_norm", (x,), "F.batch_norm({0}, None, None, training=True, eps=1e-3)")
    if f == "normalize":
        return Op("normalize", (x,), f"F.normalize({{0}}, dim={b.dim(t)})")
    k = b.draw(st.integers(1, t.dim()))
    shape = tuple(t.shape[-k:])
    if b.draw(st.booleans()):
        if f == "rms_norm":
            return Op("rms_norm", (x, b.fresh(shape, dt)), f"F.rms_norm({{0}}, {tup(shape)}, {{1}}, eps=1e-3)")
        return Op(
            "layer_norm",
            (x, b.fresh(shape, dt), b.fresh(shape, dt)),
            f"F.layer_norm({{0}}, {tup(shape)}, {{1}}, {{2}}, eps=1e-3)",
        )
    return Op(f, (x,), f"F.{f}({{0}}, {tup(shape)}, eps=1e-3)")


def indexing(b: Builder) -> Op | None:
    """index_select, gather, advanced indexing, masked_fill and scatter_add, with fresh in-range index tensors."""
    x = b.pick(lambda t: t.dim() > 0 and t.numel() > 0)
    if x is None:
        return None
    t = b.val(x)
    d = b.draw(st.integers(0, t.dim() - 1))
    n = t.shape[d]
    m = b.draw(st.sampled_from((3, 1, 2, 5)))
    f = b.draw(st.sampled_from(("index_select", "gather", "index", "masked_fill", "scatter_add", "embedding")))
    if f == "masked_fill":
        return Op("masked_fill", (x,), f"{{0}}.masked_fill({{0}} > {b.scalar(t)!r}, {b.scalar(t)!r})")
    if f == "gather":
        shape = tuple(min(s, b.draw(st.sampled_from((1, 2, 3)))) if i != d else m for i, s in enumerate(t.shape))
        return Op(
            "gather", (x, b.fresh(shape, "i64", low=0, high=n, layout="contiguous")), f"torch.gather({{0}}, {d}, {{1}})"
        )
    if f == "scatter_add":
        src = b.fresh(t.shape, DTYPE_NAMES[t.dtype])
        return Op(
            "scatter_add",
            (x, b.fresh(t.shape, "i64", low=0, high=n, layout="contiguous"), src),
            f"{{0}}.scatter_add({d}, {{1}}, {{2}})",
        )
    if f == "embedding" and t.dim() == 2 and _float(t):
        return Op(
            "embedding", (b.fresh((m,), "i64", low=0, high=t.shape[0], layout="contiguous"), x), "F.embedding({0}, {1})"
        )
    idx = b.fresh((m,), "i64", low=-n if f == "index" else 0, high=n, layout="contiguous")
    if f == "index":
        return Op("index", (x, idx), f"{{0}}[{':, ' * d}{{1}}]")
    return Op("index_select", (x, idx), f"torch.index_select({{0}}, {d}, {{1}})")


def creation(b: Builder) -> Op | None:
    x = b.pick()
    t = b.val(x)
    f = b.draw(st.sampled_from(("zeros_like", "ones_like", "full_like", "arange", "full", "new_ones")))
    if f == "full_like":
        return Op(f, (x,), f"torch.full_like({{0}}, {b.scalar(t)!r})")
    if f == "arange" and t.dim():
        d = b.dim(t)
        shape = [-1] + [1] * (t.dim() - 1 - d % t.dim())
        return Op("arange", (x,), f"({{0}} + torch.arange({{0}}.shape[{d}], dtype={t.dtype}).reshape({tup(shape)}))")
    if f == "full":
        return Op("full", (x,), f"({{0}} * torch.full({tup(t.shape[-1:])}, {b.scalar()!r}))")
    if f == "new_ones":
        return Op("new_ones", (x,), f"{{0}}.new_ones({tup(b.shape(cap=16))})")
    return Op(f, (x,), f"torch.{f}({{0}})" if f != "arange" else "torch.zeros_like({0})")


def inplace(b: Builder) -> Op | None:
    """Mutation of a fresh intermediate (clone) through a view, as functionalization sees it."""
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    t = b.val(x)
    name = f"_t{len(b.values)}"
    d = b.draw(st.integers(0, t.dim() - 1))
    n = t.shape[d]
    where = b.draw(
        st.sampled_from((f"[{':, ' * d}{n // 2}:]", f"[{':, ' * d}::2]", "" if n == 0 else f"[{':, ' * d}{n - 1}]", ""))
    )
    f = b.draw(st.sampled_from(("mul_", "add_", "relu_", "fill_", "zero_", "clamp_")))
    arg = {
        "mul_": repr(b.scalar(t)),
        "add_": repr(b.scalar(t)),
        "fill_": repr(b.scalar(t)),
        "clamp_": f"min={b.scalar(t)!r}",
    }.get(f, "")
    return Op(f"inplace_{f}", (x,), f"({name} := {{0}}.clone(), {name}{where}.{f}({arg}), {name})[2]")


FAMILIES = (
    ("matmul", matmul, 2),
    ("conv", conv, 1),
    ("pool", pool, 1),
    ("norm", norm, 1),
    ("indexing", indexing, 1),
    ("creation", creation, 1),
    ("inplace", inplace, 1),
)
