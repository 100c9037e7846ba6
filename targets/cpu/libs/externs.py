"""Matmul-family and convolution externs through torch's library paths, each chosen by a fixed rule.

    k = LinearKernel(w, b, epilogue="gelu", constant=True)   # prepacks w for oneDNN (float32)
    y = k(x)                                                  # y = gelu(x @ w.T + b)
    y = linear(x, w, b, "relu"); y = mm(a, b); y = addmm(bias, a, b); y = bmm(q, kT, alpha=scale)
    c = ConvKernel(w, b, stride=1, padding=1, epilogue="relu"); y = c(x)

Paths for linear/mm/addmm (epilogues none, relu, gelu, gelu_tanh):
    aten            torch.addmm / torch.mm (MKL sgemm), epilogue applied in place afterwards
    mkldnn          torch.ops.mkldnn._linear_pointwise on the plain weight, epilogue fused by oneDNN
    mkldnn_packed   the same on a weight reordered once by torch.ops.mkldnn._reorder_linear_weight
                    (only for constant weights: the reorder costs about one matmul)
Paths for conv2d:
    aten            torch.convolution on the input's own layout (eager's call)
    aten_cl         torch.convolution on channels-last input and weight
    mkldnn_packed   torch.ops.mkldnn._convolution_pointwise with a prepacked weight (channels-last out)

The paths round differently, so the choice is a rule on the problem, never a timing (a compiled
graph's numbers must not depend on the load of the machine that compiled it):
    linear  float32, constant weight, row-major input, oneDNN -> mkldnn_packed; the same with a weight that
            changes -> mkldnn where oneDNN outruns MKL on the machine (onednn_outruns_mkl: MKL's own code branch
            for the CPU, mkl_branch, is below AVX2, as on AMD's CPUs), else aten; bfloat16 the same where oneDNN
            has bf16 kernels and outruns MKL (onednn_bf16), or has bf16 kernels and the product a gelu epilogue
            (not the tanh form: a narrow product with that one -> aten); anything else (a transposed input,
            float16) -> aten, eager's own call (narrow types: one rounding, as eager; a transposed operand reaches MKL as a
            transpose flag, oneDNN would copy it)
    conv    channels-last input -> mkldnn_packed (constant weight, oneDNN) else aten_cl; an NCHW input
            -> aten. On a channels-last input the three paths equal eager bit for bit (f32, bf16, f16,
            checked on nine shapes); on an NCHW input only aten does.
In float32, aten differs from mkldnn in most elements (last bits); mkldnn equals mkldnn_packed. In
bfloat16 all three linear paths agreed on the shapes checked. oneDNN's paths run float32 products and
convolutions faster than aten's, the prepacked weight fastest, which is why the rule prefers them where they
round as the caller may expect. In bfloat16 every path accumulates in float32 and rounds once; the order of the
sums differs, which the low-precision judge allows (tests/numeric/low_precision.py). (The timings behind this are in
docs/cpu-target.md, "Measurements behind the runtime's and libraries' choices".)
A weight that changes (training) is never packed: reordering it every call costs several times the product
itself. Which weights are constant is the caller's to say (targets/args.ArgSpec.stable: a training graph's
weights and saved activations never are). IRC_EXTERN_PATH=<path> forces a path where a kernel has it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
from pathlib import Path

import torch
import torch.nn.functional as F

from irc import env

EPILOGUES = (None, "relu", "gelu", "gelu_tanh")
_ONEDNN_ATTR = {
    None: ("none", [], ""),
    "relu": ("relu", [], ""),
    "gelu": ("gelu", [], "none"),
    "gelu_tanh": ("gelu", [], "tanh"),
}


def onednn_available(dtype: torch.dtype = torch.float32) -> bool:
    """Whether oneDNN's paths take `dtype` here: float32, and bfloat16 where torch's oneDNN has bf16 kernels
    (narrow_products; elsewhere its bf16 weight reorder refuses: it needs AVX512-BW/VL/DQ or AVX-NE-CONVERT)."""
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
        and (dtype == torch.float32 or (dtype == torch.bfloat16 and "bfloat16" in narrow_products()))
    )


# MKL's code branches (its CNR constants, mkl_types.h; oneMKL's Developer Reference, "Named Constants for CNR
# Control"): AUTO is also what MKL names as its own branch on a CPU that is not Intel's, for which it has none
MKL_CBWR_BRANCH = 1  # mkl_cbwr_get's option: the branch
MKL_CBWR_AUTO = 2
MKL_CBWR_COMPATIBLE = 3  # SSE2; the first fixed branch (4 SSE2, 8 SSE4.2, 10 AVX2, 12 AVX-512, 14 AVX-512 VNNI)
MKL_CBWR_AVX2 = 10


def _torch_library():
    """torch's CPU library (MKL is linked into it, or is one of its dependencies, which dlsym searches too), or
    None where there is none to load."""
    for path in sorted((Path(torch.__file__).parent / "lib").glob("*torch_cpu.*")):
        with contextlib.suppress(OSError):
            return ctypes.CDLL(str(path))
    return None


def _mkl_call(lib, names: tuple[str, ...], *args: int) -> int | None:
    """The first of `names` that `lib` exports (MKL's public name, then its service layer's), called on int `args`."""
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.argtypes, fn.restype = [ctypes.c_int] * len(args), ctypes.c_int
            return int(fn(*args))
    return None


@functools.cache
def mkl_branch() -> int | None:
    """The code branch MKL runs torch's products on here, as MKL itself reports it (an MKL_CBWR_* constant), or None
    where torch has no MKL (another BLAS runs torch.mm) or its library answers no query. MKL picks kernels by the
    CPU's vendor as well as its features: its auto branch is the ISA's on an Intel CPU (10 AVX2, 12 AVX-512) and
    MKL_CBWR_AUTO, no ISA branch, on any other, where it runs generic kernels; a branch fixed by MKL_CBWR
    (COMPATIBLE and up) is the one it runs instead. Read by ctypes from torch's own library, so it is the MKL that
    torch calls; the queries start no computation (a later mkl_cbwr_set still succeeds)."""
    if not torch.backends.mkl.is_available() or (lib := _torch_library()) is None:
        return None
    auto = _mkl_call(lib, ("mkl_cbwr_get_auto_branch", "mkl_serv_cbwr_get_auto_branch"))
    if auto is None or auto < MKL_CBWR_AUTO:  # an error code (negative: a CPU type MKL does not know)
        return None
    fixed = _mkl_call(lib, ("mkl_cbwr_get", "mkl_serv_cbwr_get"), MKL_CBWR_BRANCH)
    return fixed if fixed is not None and fixed >= MKL_CBWR_COMPATIBLE else auto


def onednn_outruns_mkl() -> bool:
    """Does oneDNN run a float32 product faster than torch.mm here, whatever its weight? Where MKL reports a branch
    below AVX2 (mkl_branch: its generic kernels, on AMD's CPUs), oneDNN, which picks its kernels by the CPU's
    features alone, runs its ISA's (AVX-512 on the EPYC measured): about twice as fast, even with a weight that changed since its last product
    (training) and that oneDNN reorders in every call. Where MKL runs its AVX2 or AVX-512 branch, its sgemm stays.
    Where MKL cannot be asked (no MKL in torch, or no query in its library), the default is torch.mm: no BLAS but
    MKL is known to fall back to generic kernels on another vendor's CPU (OpenBLAS, Accelerate, Arm PL pick theirs
    by the CPU, as MKL does on Intel's), and torch.mm is eager's own call, so the default is never slower than
    eager and rounds as eager does. A property of the machine, not a timing: every process on it takes the same paths and rounds alike."""
    branch = mkl_branch()
    return branch is not None and branch < MKL_CBWR_AVX2


@functools.cache
def narrow_products() -> tuple[str, ...]:
    """The narrow dtypes whose products torch's CPU library runs on oneDNN kernels of their own (bfloat16 on
    AVX512-BF16 or AMX, float16 on AVX512-FP16 or AMX-FP16), as torch itself reports; on other CPUs torch runs them
    in a reference loop (float16 on an AMD EPYC: 0.7 GFLOP/s against float32's 150), so irc takes the float32
    product of the narrow operands there (lowering/split_addmm.py), which rounds once as eager does."""
    query = {"bfloat16": "_is_mkldnn_bf16_supported", "float16": "_is_mkldnn_fp16_supported"}
    return tuple(name for name, fn in query.items() if getattr(torch.ops.mkldnn, fn, lambda: False)())


@functools.cache
def amx_bf16_products() -> bool:
    """Does torch run bfloat16 products on oneDNN's AMX kernels here (bf16 kernels of its own, on a CPU with AMX
    tiles)? There a bf16 x @ W^T with few rows ran 1.25-2x faster as W @ x^T (mm_rules.computes_transposed)."""
    return "bfloat16" in narrow_products() and bool(getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)())


def widened_products() -> tuple[str, ...]:
    """The narrow dtypes whose products torch's CPU library runs only in a reference loop here (the others)."""
    return tuple(name for name in ("bfloat16", "float16") if name not in narrow_products())


def widened_attention_backward() -> tuple[str, ...]:
    """The narrow dtypes whose attention backward (torch's CPU flash-attention backward) runs faster on the float32
    values of its operands than in the dtype itself: its bf16 and f16 kernels took 2-3x the float32 one's time,
    widening included, on the same values (docs/cpu-target.md), and were less exact."""
    return ("bfloat16", "float16")


def _needs_grad(w: torch.Tensor) -> bool:
    return w.requires_grad and torch.is_grad_enabled()  # the oneDNN ops have no autograd formula


def apply_epilogue_(y: torch.Tensor, epilogue: str | None) -> torch.Tensor:
    if epilogue == "relu":
        return y.relu_()
    if epilogue in ("gelu", "gelu_tanh"):
        return torch.ops.aten.gelu_(y, approximate="tanh" if epilogue == "gelu_tanh" else "none")
    assert epilogue is None, f"unknown epilogue {epilogue!r}; valid: {EPILOGUES}"
    return y


def forced_path(paths: tuple[str, ...]) -> str | None:
    """IRC_EXTERN_PATH, where this kernel has that path."""
    forced = env.get("IRC_EXTERN_PATH")
    return forced if forced in paths else None


# linear / mm / addmm ------------------------------------------------------------------------------
def linear_paths(dtype: torch.dtype, constant: bool) -> tuple[str, ...]:
    """The library paths of a product by a weight of `dtype` (a `constant` one may be prepacked)."""
    if not onednn_available(dtype):
        return ("aten",)
    return ("aten", "mkldnn", "mkldnn_packed") if constant else ("aten", "mkldnn")


def linear_rule(paths: tuple[str, ...], dtype: torch.dtype, unit_rows: bool, epilogue: str | None = None) -> str:
    """The path of a product among `paths`: IRC_EXTERN_PATH's where it is one, else for a float32 input whose rows
    are contiguous oneDNN's prepacked weight, or its plain one (any strides: oneDNN reorders it in the call) where
    oneDNN outruns MKL on this machine (onednn_outruns_mkl), else MKL's (mm_rules.rule_path applies the same rule
    before any call). Rows with gaps between them (a sequence's last position, `h[:, -1]`, before a vocabulary-wide
    head) are gathered into one block first: a copy of m x k elements beside 2 m k n flops, where MKL's sgemm runs a
    wide weight at a fraction of oneDNN's packed rate. A transposed input stays on MKL, which
    reads it in place (torch would copy it for oneDNN). A bfloat16 product with a gelu epilogue takes oneDNN's path
    wherever oneDNN has bf16 kernels: torch.addmm would run the same oneDNN product, and then the gelu as a pass of
    its own over the result. Not the tanh form: oneDNN's made a narrow GPT-2 slower than irc's own kernel does
    (docs/cpu-target.md), so a narrow product keeps that epilogue out of the library call (fold-bias leaves it a
    kernel)."""
    if (forced := forced_path(paths)) is not None:
        return forced
    if epilogue == "gelu_tanh" and dtype != torch.float32:
        return "aten"  # oneDNN's tanh-form gelu after a bf16 product: HF GPT-2 under autocast ran 0.77x with it
    gelu_on_onednn = epilogue == "gelu" and dtype == torch.bfloat16 and "bfloat16" in narrow_products()
    if not (dtype == torch.float32 or onednn_bf16(dtype) or gelu_on_onednn) or not unit_rows:
        return "aten"
    if "mkldnn_packed" in paths:
        return "mkldnn_packed"
    return "mkldnn" if "mkldnn" in paths and (onednn_outruns_mkl() or gelu_on_onednn) else "aten"


def onednn_bf16(dtype: torch.dtype) -> bool:
    """Does a bfloat16 product take float32's oneDNN paths here? Where oneDNN has bf16 kernels of its own
    (narrow_products) and outruns MKL (onednn_outruns_mkl): on the 2-core AMD EPYC (AVX512-BF16, MKL's generic
    branch) a linear layer's CPU time was 2-6% under torch.addmm's, 4-17% with relu or gelu as oneDNN's post-op
    against torch.addmm and the activation's own pass (32x1024x1024 to 2048x1024x256, one thread)."""
    return dtype == torch.bfloat16 and "bfloat16" in narrow_products() and onednn_outruns_mkl()


def unit_rows(x: torch.Tensor) -> bool:
    """Is each row of x (its last dim) contiguous, whatever the steps between rows?"""
    return x.is_contiguous() or x.stride(-1) == 1


class LinearKernel:
    """y = epilogue(x @ weight.T + bias) for x of shape [..., K]; weight [N, K], bias [N] or None.

    `constant`: the weight will not change between calls, so it may be prepacked (kept here)."""

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        epilogue: str | None = None,
        *,
        constant: bool = True,
        path: str | None = None,
    ):
        assert epilogue in EPILOGUES, f"unknown epilogue {epilogue!r}; valid: {EPILOGUES}"
        self.weight, self.bias, self.epilogue, self.constant = weight, bias, epilogue, constant
        self.fixed_path = path
        self._packed: torch.Tensor | None = None

    def paths(self) -> tuple[str, ...]:
        return ("aten",) if _needs_grad(self.weight) else linear_paths(self.weight.dtype, self.constant)

    def packed(self, m_hint: int) -> torch.Tensor:
        if self._packed is None:
            self._packed = torch.ops.mkldnn._reorder_linear_weight(self.weight.contiguous(), m_hint)
        return self._packed

    def run(self, x: torch.Tensor, path: str, bias: torch.Tensor | None = None) -> torch.Tensor:
        """`bias`: one given with this call (a graph's tn.addmm operand), else the kernel's own."""
        bias = self.bias if bias is None else bias
        if path == "aten":
            x2 = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])  # not -1: K may be 0
            wt = self.weight.t()
            y = torch.addmm(bias, x2, wt) if bias is not None else torch.mm(x2, wt)
            return apply_epilogue_(y, self.epilogue).reshape(*x.shape[:-1], y.shape[-1])
        w = self.packed(x.numel() // x.shape[-1]) if path == "mkldnn_packed" else _plain(self.weight)
        attr, scalars, alg = _ONEDNN_ATTR[self.epilogue]
        return torch.ops.mkldnn._linear_pointwise(x.contiguous(), w, bias, attr, scalars, alg)

    def choose(self, x: torch.Tensor) -> str:
        """The path by the module's rule: a function of the problem (dtype, constant weight), not of timings."""
        if self.fixed_path:
            return self.fixed_path
        if x.numel() == 0 or self.weight.numel() == 0:
            return "aten"  # empty products: nothing to run, aten handles them
        return linear_rule(self.paths(), self.weight.dtype, unit_rows(x), self.epilogue)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x, self.choose(x))


def _plain(w: torch.Tensor) -> torch.Tensor:
    """A weight as oneDNN's plain path takes it without a copy: row- or column-major (a backward's g @ W reads W
    transposed); other strides are copied."""
    return w if w.dim() == 2 and (w.is_contiguous() or w.t().is_contiguous()) else w.contiguous()


def linear(x, weight, bias=None, epilogue: str | None = None, *, path: str | None = None):
    """F.linear(x, weight, bias) followed by `epilogue`, through the fastest path for a weight that
    may change between calls (no prepacking: hold a LinearKernel for constant weights)."""
    k = LinearKernel(weight, bias, epilogue, constant=False)
    return k.run(x, path or k.choose(x))


def mm(a: torch.Tensor, b: torch.Tensor, *, path: str | None = None) -> torch.Tensor:
    """a @ b for a [M, K], b [K, N]."""
    return linear(a, b.t(), None, path=path)


def addmm(bias, a, b, *, beta=1, alpha=1, epilogue=None, path=None) -> torch.Tensor:
    """epilogue(beta * bias + alpha * (a @ b)); the library paths take beta = alpha = 1 and a 1-D bias."""
    if beta != 1 or alpha != 1 or bias.dim() != 1:
        return apply_epilogue_(torch.addmm(bias, a, b, beta=beta, alpha=alpha), epilogue)
    return linear(a, b.t(), bias, epilogue, path=path)


def bmm(a: torch.Tensor, b: torch.Tensor, *, alpha: float | None = None, out: torch.Tensor | None = None):
    """a @ b batched ([B, M, K] x [B, K, N]); `alpha` scales the product inside the GEMM (attention's
    1/sqrt(d)), `out` reuses a buffer. MKL's batched sgemm is the only library path on CPU."""
    if alpha is None or alpha == 1:
        return torch.bmm(a, b, out=out)
    if out is None:
        out = torch.empty(a.shape[0], a.shape[1], b.shape[2], dtype=a.dtype, device=a.device)
    return torch.baddbmm(out, a, b, beta=0, alpha=alpha, out=out)


# convolution ----------------------------------------------------------------------------------------
def _pair(v) -> list[int]:
    return [v, v] if isinstance(v, int) else list(v)


class ConvKernel:
    """y = epilogue(conv2d(x, weight, bias, stride, padding, dilation, groups)) for 4-D x (constant and path
    as for LinearKernel)."""

    def __init__(
        self,
        weight,
        bias=None,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        epilogue=None,
        *,
        constant: bool = True,
        path: str | None = None,
    ):
        assert epilogue in EPILOGUES, f"unknown epilogue {epilogue!r}; valid: {EPILOGUES}"
        self.weight, self.bias, self.groups, self.epilogue = weight, bias, groups, epilogue
        self.stride, self.padding, self.dilation = _pair(stride), _pair(padding), _pair(dilation)
        self.constant, self.fixed_path = constant, path
        self._packed: dict[tuple, torch.Tensor] = {}
        self._w_cl: torch.Tensor | None = None

    def paths(self) -> tuple[str, ...]:
        p = ("aten", "aten_cl")
        if self.constant and onednn_available(self.weight.dtype) and not _needs_grad(self.weight):
            p += ("mkldnn_packed",)
        return p

    def run(self, x: torch.Tensor, path: str) -> torch.Tensor:
        if path == "mkldnn_packed":
            shape = tuple(x.shape)
            if shape not in self._packed:  # the reorder depends on the input size
                self._packed[shape] = torch.ops.mkldnn._reorder_convolution_weight(
                    self.weight.contiguous(), self.padding, self.stride, self.dilation, self.groups, list(shape)
                )
            attr, scalars, alg = _ONEDNN_ATTR[self.epilogue]
            xc = x.contiguous(memory_format=torch.channels_last)
            packed, conv = self._packed[shape], (self.padding, self.stride, self.dilation, self.groups)
            return torch.ops.mkldnn._convolution_pointwise(xc, packed, self.bias, *conv, attr, scalars, alg)
        w = self.weight
        if path == "aten_cl":
            x = x.contiguous(memory_format=torch.channels_last)
            if self._w_cl is None or not self.constant:
                self._w_cl = w.contiguous(memory_format=torch.channels_last)
            w = self._w_cl
        y = torch.convolution(x, w, self.bias, self.stride, self.padding, self.dilation, False, [0, 0], self.groups)
        return apply_epilogue_(y, self.epilogue)

    def choose(self, x: torch.Tensor, channels_last: bool = False) -> str:
        """The path by the module's rule: eager's layout for the input's layout (or channels-last where the
        caller computes in NHWC: select-layout's choice), never a timing. On a channels-last input all paths
        equal eager bit for bit, so the fastest (prepacked) one runs."""
        if self.fixed_path:
            return self.fixed_path
        paths = self.paths()
        if (forced := forced_path(paths)) is not None:
            return forced
        if (channels_last or x.is_contiguous(memory_format=torch.channels_last)) and x.shape[1] > 1:
            return "mkldnn_packed" if "mkldnn_packed" in paths else "aten_cl"
        return "aten"

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x, self.choose(x))


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, epilogue=None, *, path=None):
    """One-shot F.conv2d + epilogue (weights treated as non-constant: no prepacking)."""
    return ConvKernel(weight, bias, stride, padding, dilation, groups, epilogue, constant=False, path=path)(x)


def reference(op: str, *args, epilogue=None, **kw) -> torch.Tensor:
    """Eager torch for tests: op in linear | conv2d."""
    y = F.linear(*args, **kw) if op == "linear" else F.conv2d(*args, **kw)
    return apply_epilogue_(y, epilogue)
