"""The view family. Result types come from FX meta; `?` dims get their sizes from the symbol table."""

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from irc.dialects import tensor as tn

from ..aten_table import Unsupported, imports
from ..symbols import concrete

aten = torch.ops.aten
INT_MAX = 2**63 - 1


def rank(v) -> int:
    return len(v.type.get_shape())


def in_shape(node, i=0):
    return node.args[i].meta["val"].shape


@imports(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default)
def import_view(b, node, x, size):
    return b.reshape(x, node.meta["val"].shape)


@imports(aten.expand.default, aten.expand_copy.default)
def import_expand(b, node, x, size, *, implicit=False):
    """A symbolic input size expanded to another size is 1 at run time (expand allows nothing else); the ShapeEnv
    knows it from Dynamo's guard. tn.expand broadcasts only a size-1 dim, so the input's type says 1 first."""
    shape, out = list(in_shape(node)), node.meta["val"].shape
    lead = len(out) - len(shape)
    ones = [
        d
        for d, n in enumerate(shape)
        if concrete(n) is None and concrete(out[lead + d]) not in (None, 1) and statically_known_true(n == 1)
    ]
    if ones:
        x = b.reshape(x, [1 if d in ones else n for d, n in enumerate(shape)])
    return b.expand(x, out)


@imports(aten.permute.default, aten.permute_copy.default)
def import_permute(b, node, x, dims):
    r = rank(x)
    perm = [d % r for d in dims] if r else []
    return x if perm == list(range(r)) else b.add(tn.PermuteOp(x, perm))


@imports(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def import_squeeze(b, node, x, dims=None):
    shape = in_shape(node)
    r = len(shape)
    if dims is None:
        dims = range(r)
    elif isinstance(dims, int):
        dims = [dims]
    dims = sorted({d % r for d in dims}) if r else []
    if any(concrete(shape[d]) is None for d in dims):
        raise Unsupported("squeeze of a dynamic dim")
    dims = [d for d in dims if concrete(shape[d]) == 1]
    return b.add(tn.SqueezeOp(x, dims)) if dims else x


@imports(aten.unsqueeze.default, aten.unsqueeze_copy.default)
def import_unsqueeze(b, node, x, dim):
    return b.add(tn.UnsqueezeOp(x, dim % (rank(x) + 1)))


def static_slice(size: int, start, end, step):
    """aten.slice's clamping of start/end to [0, size]."""
    start = 0 if start is None else start
    end = INT_MAX if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end, step


@imports(aten.slice.Tensor, aten.slice_copy.Tensor)
def import_slice(b, node, x, dim=0, start=None, end=None, step=1):
    dim %= rank(x)
    size = concrete(in_shape(node)[dim])
    if size is None or not all(isinstance(v, int) or v is None for v in (start, end, step)):
        raise Unsupported("slice of a dynamic dim or with symbolic bounds")
    start, end, step = static_slice(size, start, end, step)
    if (start, end, step) == (0, size, 1):
        return x
    return b.add(tn.SliceOp(x, dim, start, end, step, b.result_type(node)))


@imports(aten.select.int, aten.select_copy.int)
def import_select(b, node, x, dim, index):
    dim %= rank(x)
    size = concrete(in_shape(node)[dim])
    if size is None or not isinstance(index, int):
        raise Unsupported("select on a dynamic dim or at a symbolic index")
    return b.add(tn.SelectOp(x, dim, index % size if size else index))


@imports(aten.cat.default)
def import_cat(b, node, tensors, dim=0):
    out = node.meta["val"]
    dt = out.dtype
    # Legacy torch.cat skips 1-d empty tensors beside higher-rank ones.
    parts = [
        b.convert(t, dt)
        for t, n in zip(tensors, node.args[0])
        if not (n.meta["val"].dim() == 1 and n.meta["val"].shape[0] == 0 and out.dim() != 1)
    ]
    if len(parts) == 1:
        return parts[0]
    return b.add(tn.CatOp(parts, dim % out.dim(), b.result_type(node)))


@imports(aten.split_with_sizes.default, aten.split.Tensor, aten.split_with_sizes_copy.default, aten.split_copy.Tensor)
def import_split(b, node, x, sizes, dim=0):
    dim %= rank(x)
    outs = []
    start = 0
    for piece in node.meta["val"]:
        n = concrete(piece.shape[dim])
        if n is None or concrete(in_shape(node)[dim]) is None:
            raise Unsupported("split of a dynamic dim")
        outs.append(
            b.add(tn.SliceOp(x, dim, start, start + n, 1, b.type_of(piece)))
            if (start, n) != (0, concrete(in_shape(node)[dim]))
            else x
        )
        start += n
    return tuple(outs)


@imports(aten.unbind.int, aten.unbind_copy.int)
def import_unbind(b, node, x, dim=0):
    dim %= rank(x)
    return tuple(b.add(tn.SelectOp(x, dim, i)) for i in range(len(node.meta["val"])))


@imports(aten.flip.default)
def import_flip(b, node, x, dims):
    dims = sorted({d % rank(x) for d in dims}) if rank(x) else []
    return b.add(tn.FlipOp(x, dims)) if dims else x


@imports(aten.constant_pad_nd.default)
def import_pad(b, node, x, pad, value=0):
    r = rank(x)
    if len(pad) % 2 or len(pad) // 2 > r or not all(isinstance(p, int) for p in pad):
        raise Unsupported("pad with symbolic or malformed widths")
    low, high = [0] * r, [0] * r
    for i in range(len(pad) // 2):
        low[r - 1 - i], high[r - 1 - i] = pad[2 * i], pad[2 * i + 1]
    if any(concrete(d) is None for d in in_shape(node)):
        raise Unsupported("pad of a dynamic shape")
    return b.add(tn.PadOp(x, b.constant(value, b.dtype(x)), low, high))


@imports(aten.as_strided.default, aten.as_strided_copy.default)
def import_as_strided(b, node, x, size, stride, storage_offset=None):
    src = node.args[0].meta["val"]
    if not all(isinstance(v, int) for v in (*size, *stride, storage_offset or 0)):
        raise Unsupported("as_strided with symbolic sizes")
    if not src.is_contiguous() or src.storage_offset() != 0:
        raise Unsupported("as_strided of a tensor that is not a contiguous base")
    return b.add(tn.AsStridedOp(x, b.result_type(node), list(stride), storage_offset or 0))


@imports(aten.repeat.default)
def import_repeat(b, node, x, repeats):
    shape = list(in_shape(node))
    shape = [1] * (len(repeats) - len(shape)) + shape
    x = b.reshape(x, shape)
    interleaved = [v for n in shape for v in (1, n)]
    x = b.reshape(x, interleaved)
    expanded = [v for r, n in zip(repeats, shape) for v in (r, n)]
    x = b.expand(x, expanded)
    return b.reshape(x, node.meta["val"].shape)


def row_major_strides(shape) -> list[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def static_shape(node, what: str, i: int = 0) -> list[int]:
    shape = [concrete(d) for d in in_shape(node, i)]
    if any(d is None for d in shape):
        raise Unsupported(f"{what} of a dynamic shape")
    return shape


@imports(aten.diagonal.default, aten.diagonal_copy.default)
def import_diagonal(b, node, x, offset=0, dim1=0, dim2=1):
    """A strided read of the row-major value: the diagonal steps by stride(dim1) + stride(dim2)."""
    shape = static_shape(node, "diagonal")
    r = len(shape)
    d1, d2 = dim1 % r, dim2 % r
    st = row_major_strides(shape)
    out = node.meta["val"]
    strides = [st[d] for d in range(r) if d not in (d1, d2)] + [st[d1] + st[d2]]
    start = offset * st[d2] if offset >= 0 else -offset * st[d1]
    if out.numel() == 0:
        start = 0
    return b.add(tn.AsStridedOp(x, b.result_type(node), strides, start))


@imports(aten.unfold.default, aten.unfold_copy.default)
def import_unfold(b, node, x, dimension, size, step):
    """Windows of `size` every `step` along a dim, as a strided read of the row-major value."""
    shape = static_shape(node, "unfold")
    if not shape:
        return b.reshape(x, node.meta["val"].shape)  # a 0-d tensor unfolds to [1]
    d = dimension % len(shape)
    st = row_major_strides(shape)
    strides = st[:d] + [st[d] * step] + st[d + 1 :] + [st[d]]
    return b.add(tn.AsStridedOp(x, b.result_type(node), strides, 0))


@imports(aten.narrow_copy.default)
def import_narrow_copy(b, node, x, dim, start, length):
    if not all(isinstance(v, int) for v in (start, length)):
        raise Unsupported("narrow with symbolic bounds")
    size = concrete(in_shape(node)[dim % rank(x)])
    if size is None:
        raise Unsupported("narrow of a dynamic dim")
    start = start + size if start < 0 else start
    return import_slice(b, node, x, dim, start, start + length, 1)
