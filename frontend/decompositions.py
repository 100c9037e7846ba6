"""The decomposition table AOT autograd applies before import: core aten, narrowed to what irc imports itself."""

import functools

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

from .aten_table import load_all
from .attention_ops import DECOMPOSITIONS as ATTENTION_OPS
from .attention_ops import UNFUSED as UNFUSED_ATTENTION
from .composites_distance import COMPOSITES as DISTANCES
from .composites_indexing import COMPOSITES as INDEXING
from .composites_segment import COMPOSITES as SEGMENTS
from .searching import DECOMPOSITIONS as SEARCHING

aten = torch.ops.aten

# Composite ops that are not in the core table but decompose into ops irc imports.
EXTRA = [
    aten.clamp_min,
    aten.clamp_max,
    aten.repeat_interleave.Tensor,
    aten.elu,
    aten.hardtanh,
    aten.leaky_relu,
    aten.linalg_vector_norm,
    aten.dist,
    aten.ldexp,
    aten.addmv,
    # torch's own decompositions of ops that would otherwise run eagerly (each makes its OpInfo entries native)
    aten._batch_norm_with_update_functional,
    aten.batch_norm_backward,
    aten.grid_sampler_2d,
    aten.native_group_norm,
    aten.max_pool3d_with_indices,
    aten.tril_indices,
    aten.triu_indices,
]


def _fma(a, b, c):
    return a * b + c  # two roundings where fma has one: within float32 tolerance, as eager's CPU addcmul_ is


def _addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """addbmm as one addmm over the batch and inner dims together: (n, b*k) @ (b*k, m)."""
    b, n, k = batch1.shape
    m = batch2.shape[-1]
    return aten.addmm(self, batch1.permute(1, 0, 2).reshape(n, b * k), batch2.reshape(b * k, m), beta=beta, alpha=alpha)


def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """The kernel of nn.functional.bilinear: each input unsqueezed at its expand dims, the product summed over sumdim."""

    def expand(t, dims):
        for d in sorted(dims):
            t = t.unsqueeze(d)
        return t

    dtype = i1.dtype
    narrow = dtype in (torch.bfloat16, torch.float16)  # eager rounds once in the narrow type, not per product
    if narrow:
        i1, i2, i3 = (t.float() for t in (i1, i2, i3))
    out = expand(i1, expand1) * expand(i2, expand2) * expand(i3, expand3)
    out = out.sum(list(sumdim)) if len(sumdim) else out
    return out.to(dtype) if narrow else out


def _embedding_renorm(weight, indices, max_norm, norm_type):
    """The rows of weight that indices names and whose norm exceeds max_norm, scaled to max_norm (eager's 1e-7 included)."""
    norm = torch.linalg.vector_norm(weight, norm_type, dim=1)
    rows = torch.arange(weight.shape[0], device=weight.device)
    named = (indices.reshape(-1, 1) == rows).any(0)
    scale = torch.where(named & (norm > max_norm), max_norm / (norm + 1e-7), torch.ones_like(norm))
    return weight * scale.unsqueeze(1)


def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of self whose diagonal (offset, dim1, dim2) is src: a where over the two dims moved last."""
    x = self.movedim((dim1, dim2), (-2, -1))
    n_rows, n_cols = x.shape[-2], x.shape[-1]
    if src.shape[-1] == 0:
        return self.clone()
    rows = torch.arange(n_rows, device=self.device).unsqueeze(1)
    cols = torch.arange(n_cols, device=self.device).unsqueeze(0)
    on_diag = (cols - rows) == offset
    k = (rows if offset >= 0 else cols).expand(n_rows, n_cols).clamp(max=src.shape[-1] - 1)
    out = torch.where(on_diag, src[..., k], x)
    return out.movedim((-2, -1), (dim1, dim2))


def _pool_out(length, kernel, stride, pad, ceil_mode):
    span = length + 2 * pad - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= length + pad:
        out -= 1
    return out


def _avg_pool3d(
    self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """avg_pool3d as a zero-padded input unfolded on its three spatial dims, summed, divided by eager's window counts."""

    def three(v, default):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        v = v or default
        return v * 3 if len(v) == 1 else v

    k = three(kernel_size, None)
    s = three(stride, k)
    p = three(padding, [0])
    x = self
    counts = []
    for i in range(3):
        dim = x.dim() - 3 + i
        length = self.shape[dim]
        o = _pool_out(length, k[i], s[i], p[i], ceil_mode)
        extra = max(0, (o - 1) * s[i] + k[i] - (length + 2 * p[i]))
        pads = [0, 0] * (x.dim() - 1 - dim) + [p[i], p[i] + extra]
        x = torch.constant_pad_nd(x, pads, 0.0) if any(pads) else x
        lo, hi = (-p[i], length + p[i]) if count_include_pad else (0, length)
        start = torch.arange(o, device=self.device) * s[i] - p[i]
        cnt = (torch.clamp(start + k[i], max=hi) - torch.clamp(start, min=lo)).clamp(min=0)
        counts.append(cnt)
    n = x.dim()
    x = x.unfold(n - 3, k[0], s[0]).unfold(n - 2, k[1], s[1]).unfold(n - 1, k[2], s[2])
    total = x.sum((-3, -2, -1))
    if divisor_override:
        return total / divisor_override
    divisor = counts[0].view(-1, 1, 1) * counts[1].view(1, -1, 1) * counts[2].view(1, 1, -1)
    return total / divisor.to(total.dtype)


def _adaptive_avg_pool3d(self, output_size):
    """Adaptive average pooling is separable: per spatial dim a matmul with eager's window-averaging matrix."""
    x = self
    for i, o in enumerate(output_size):
        dim = self.dim() - 3 + i
        length = self.shape[dim]
        idx = torch.arange(o, device=self.device)
        start = (idx * length).div(o, rounding_mode="floor").unsqueeze(1)
        end = ((idx + 1) * length + o - 1).div(o, rounding_mode="floor").unsqueeze(1)
        j = torch.arange(length, device=self.device).unsqueeze(0)
        weights = ((j >= start) & (j < end)).to(self.dtype) / (end - start).to(self.dtype)
        x = (x.movedim(dim, -1) @ weights.t()).movedim(-1, dim)
    return x


def _adaptive_max_pool(x, output_size):
    """Adaptive max pooling with eager's windows [floor(i*L/o), ceil((i+1)*L/o)) on each spatial dim: the windows read by
    index (each padded to the longest by repeating its last element), one max over them, the flat index of the winner."""
    n = len(output_size)
    spatial = x.shape[-n:]
    windows = []
    for length, o in zip(spatial, output_size):
        k = max(-(-((i + 1) * length) // o) - (i * length) // o for i in range(o))
        i = torch.arange(o, device=x.device).unsqueeze(1)
        start, end = (
            (i * length).div(o, rounding_mode="floor"),
            ((i + 1) * length + o - 1).div(o, rounding_mode="floor"),
        )
        windows.append(torch.minimum(start + torch.arange(k, device=x.device), end - 1))  # (o, k)
    vals = x
    for d, idx in enumerate(windows):  # the dim d read as (o_d, k_d): [..., o_0, k_0, ..., o_d, k_d, L_{d+1}, ...]
        vals = vals[(Ellipsis, idx) + (slice(None),) * (n - 1 - d)]
    lin = torch.zeros((), dtype=torch.int64, device=x.device)
    for d, idx in enumerate(windows):
        flat = 1
        for length in spatial[d + 1 :]:
            flat *= length
        shape = [1] * (2 * n)
        shape[2 * d], shape[2 * d + 1] = idx.shape
        lin = lin + (idx * flat).view(shape)
    batch = x.dim() - n
    perm = list(range(batch)) + [batch + 2 * d for d in range(n)] + [batch + 2 * d + 1 for d in range(n)]
    vals = vals.permute(perm).reshape(*x.shape[:batch], *output_size, -1)
    lin = lin.permute([2 * d for d in range(n)] + [2 * d + 1 for d in range(n)]).reshape(*output_size, -1)
    values, arg = torch.max(vals, -1)
    indices = torch.gather(lin.expand(vals.shape), -1, arg.unsqueeze(-1)).squeeze(-1)
    return values, indices


def _adaptive_max_pool2d(x, output_size):
    """torch's decomposition (empty, global and evenly divided cases), else the general windows."""
    out = _TORCH_ADAPTIVE_MAX[2](x, output_size) if _TORCH_ADAPTIVE_MAX[2] else NotImplemented
    return _adaptive_max_pool(x, output_size) if out is NotImplemented else out


def _adaptive_max_pool3d(x, output_size):
    out = _TORCH_ADAPTIVE_MAX[3](x, output_size) if _TORCH_ADAPTIVE_MAX[3] else NotImplemented
    return _adaptive_max_pool(x, output_size) if out is NotImplemented else out


def _batch_norm_functional_eval(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """The functional batch norm with training=False (irc imports only the training one): torch's decomposition."""
    if training:
        return NotImplemented
    return _TORCH_BN_FUNCTIONAL(x, weight, bias, running_mean, running_var, training, momentum, eps)


def _gather_scalar(self, dim, index, *, sparse_grad=False):
    """gather between a 0-d and a 1-d tensor (eager allows it; irc's importer wants equal ranks): both as 1-d."""
    if self.dim() == index.dim():
        return NotImplemented
    out = aten.gather(self.reshape(-1), 0, index.reshape(-1), sparse_grad=sparse_grad)
    return out.reshape(index.shape)


_TORCH_BN_FUNCTIONAL = get_decompositions([aten._native_batch_norm_legit_functional])[
    aten._native_batch_norm_legit_functional.default
]

# torch's own where it has one (older releases have none for 3-d or 2-d): it returns NotImplemented for the rest
_TORCH_ADAPTIVE_MAX = {
    2: get_decompositions([aten.adaptive_max_pool2d]).get(aten.adaptive_max_pool2d.default),
    3: get_decompositions([aten.adaptive_max_pool3d]).get(aten.adaptive_max_pool3d.default),
}

# Simple composites torch has no decomposition for, written here in ops irc imports.
COMPOSITES = {
    aten.addbmm.default: _addbmm,
    aten._trilinear.default: _trilinear,
    aten.embedding_renorm.default: _embedding_renorm,
    aten.diagonal_scatter.default: _diagonal_scatter,
    aten.avg_pool3d.default: _avg_pool3d,
    aten._adaptive_avg_pool3d.default: _adaptive_avg_pool3d,
    aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
    aten.adaptive_max_pool3d.default: _adaptive_max_pool3d,
}

# Ops irc imports, decomposed only in the cases their importer refuses (NotImplemented keeps the op whole).
PARTIAL = {
    aten._native_batch_norm_legit_functional.default: _batch_norm_functional_eval,
    aten.gather.default: _gather_scalar,
}


def decomposition_table(attention: bool = True) -> dict:
    """`attention`: options' attention (False: torch's flash attention and its backward decomposed, no tn.sdpa).
    Built once per process (rebuilding it was a large share of a small graph's first call), and again once
    inductor has registered prims.fma; each caller gets its own copy."""
    return dict(_table(attention, hasattr(torch.ops.prims, "fma")))


@functools.cache
def _table(attention: bool, fma: bool) -> dict:
    table = dict(core_aten_decompositions())
    table.update(get_decompositions(EXTRA))
    table.update(COMPOSITES)
    table.update(INDEXING)  # index_reduce, masked_scatter, put, histc, as_strided_scatter (composites_indexing.py)
    table.update(DISTANCES)  # cdist, pdist and their backwards (composites_distance.py)
    table.update(SEGMENTS)  # segment_reduce (composites_segment.py)
    table.update(ATTENTION_OPS)  # torch's fused attention ops (attention_ops.py)
    table.update(SEARCHING)  # searchsorted, bucketize, isin (searching.py)
    # Dynamo writes an optimizer's addcmul_/addcdiv_/lerp_ as inductor's prims.fma (registered when it does)
    if fma:
        table[torch.ops.prims.fma.default] = _fma
    importers = load_all()
    # An op irc imports natively stays whole: its own lowering beats the generic decomposition.
    table = {op: fn for op, fn in table.items() if op not in importers}
    table.update(PARTIAL)
    if not attention:
        flash = aten._scaled_dot_product_flash_attention_for_cpu.default
        table[flash] = core_aten_decompositions()[flash]
        table.update(UNFUSED_ATTENTION)
    return table
