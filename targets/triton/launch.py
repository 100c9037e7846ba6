"""One generated kernel, ready to launch: its jitted function (autotuned in max-autotune mode), the
flattening of buffer arguments into pointer, sizes and strides, and the grid."""

import math

import torch

from irc.dialects import loop
from irc.targets.reference.loop import extents

from . import blocks, ensure_interpreter
from .loader import load_source
from .source import KernelSource


class TritonKernel:
    def __init__(self, src: KernelSource, nest: loop.NestOp, autotune: bool = False):
        self.interpret = ensure_interpreter()
        import triton

        self.src, self.nest = src, nest
        fn = getattr(load_source(src.text), src.name)
        self.autotuned = autotune
        if autotune:
            outs = [a.split(":")[0] for a in _arg_names(src) if a.startswith("out") and "_" not in a]
            configs = [
                triton.Config({"XBLOCK": c["XBLOCK"], "RBLOCK": c["RBLOCK"]}, num_warps=c["num_warps"])
                for c in blocks.autotune_configs(src.mode, src.rblock)
            ]
            extra = {"do_bench": blocks.cpu_bench} if self.interpret else {}
            fn = triton.autotune(configs, key=["xnumel", "rnumel"], restore_value=outs, **extra)(fn)
        self.fn = fn
        self.par, self.red = nest.parallel_dims(), nest.reduction_dims()

    def args(self, values) -> list:
        return flatten(self.src.params, values)

    def __call__(self, values, syms) -> None:
        sizes = extents(self.nest, syms)
        xnumel = math.prod(sizes[d] for d in self.par)
        rnumel = math.prod(sizes[d] for d in self.red)
        if xnumel == 0:
            return
        args = self.args(values) + [xnumel, rnumel]
        if self.autotuned:
            self.fn[lambda meta: (triton_cdiv(xnumel, meta["XBLOCK"]),)](*args)
            return
        b = blocks.heuristic(self.src.mode, xnumel, rnumel, self.src.rblock, self.interpret)
        self.fn[(triton_cdiv(xnumel, b["XBLOCK"]),)](
            *args, XBLOCK=b["XBLOCK"], RBLOCK=b["RBLOCK"], num_warps=b["num_warps"]
        )


def flatten(params, values) -> list:
    """Kernel arguments for func arguments: a buffer is its tensor, sizes and strides; an index is an int.

    An empty buffer is passed as one zero element with every stride 0: a kernel may load from it where the value
    is discarded (a select arm, the loop dialect's rule), and its own storage has no element to read (under the
    interpreter such a load of an empty tensor faulted the process)."""
    out = []
    for (kind, _), v in zip(params, values):
        if kind == "buffer" and v.numel() == 0:
            out += [torch.zeros(1, dtype=v.dtype, device=v.device), *v.shape, *[0] * v.dim()]
        elif kind == "buffer":
            out += [v, *v.shape, *v.stride()]
        else:
            out.append(int(v))
    return out


class DotLauncher:
    """The tl.dot template of one mm or bmm extern (matmul.py), with or without its fused epilogue."""

    def __init__(self, kern, autotune: bool = False):
        self.interpret = ensure_interpreter()
        import triton

        self.kern = kern
        fn = getattr(load_source(kern.text), kern.name)
        self.autotuned = autotune
        if autotune:
            outs = [a for a in _arg_names(kern) if a == "c" or (a.startswith("out") and "_" not in a)]
            configs = [
                triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w)
                for m, n, k, w in blocks.dot_configs(kern.arg_types["a"] == "*fp32")
            ]
            extra = {"do_bench": blocks.cpu_bench} if self.interpret else {}
            fn = triton.autotune(configs, key=["M", "N", "K"], restore_value=outs, **extra)(fn)
        self.fn = fn

    def __call__(self, a, b, c=None, epilogue=()):
        (m, k), n = a.shape[-2:], b.shape[-1]
        batch = a.shape[0] if self.kern.batched else 1
        if m == 0 or n == 0 or batch == 0:
            return
        args = [a, *a.shape, *a.stride(), b, *b.shape, *b.stride()]
        args += [c, *c.shape, *c.stride()] if c is not None else flatten(self.kern.params, epilogue)
        args += [m, n, k]
        if self.autotuned:
            self.fn[lambda meta: (triton_cdiv(m, meta["BLOCK_M"]), triton_cdiv(n, meta["BLOCK_N"]), batch)](*args)
            return
        b_ = blocks.dot_heuristic(m, n, k, self.interpret)
        grid = (triton_cdiv(m, b_["BLOCK_M"]), triton_cdiv(n, b_["BLOCK_N"]), batch)
        self.fn[grid](
            *args, BLOCK_M=b_["BLOCK_M"], BLOCK_N=b_["BLOCK_N"], BLOCK_K=b_["BLOCK_K"], num_warps=b_["num_warps"]
        )


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _arg_names(src) -> list[str]:
    head = src.kernel.split("(", 1)[1].split(")", 1)[0]
    return [a.strip() for a in head.split(",")]


def device_of(values) -> torch.device:
    return next((v.device for v in values if isinstance(v, torch.Tensor)), torch.device("cpu"))


def overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two tensors may share memory (their address ranges intersect)."""
    if x.device != y.device or x.numel() == 0 or y.numel() == 0:
        return False

    def span(t):
        start = t.data_ptr()
        return start, start + (1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))) * t.element_size()

    (a0, a1), (b0, b1) = span(x), span(y)
    return a0 < b1 and b0 < a1
