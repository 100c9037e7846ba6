"""What a target tells the passes about its libraries and its machine: `Rules`, one per graph.

A target answers `rules(args, opts)` once per graph (targets/); the driver (compiler.py) puts the answer in the
`Plan` (lowering/pipeline.py) that the passes read. Every field has the meaning "the target has no such rule"
when left at its default, so `Rules()` is what a target without libraries (or irc-opt on a hand-written file)
runs with. A leaf: the passes and the targets both import it, and it imports neither.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

OpRule = Callable[[Any], bool]  # a loop-stage tn op -> whether the rule holds for it


def _library_products(module) -> tuple[str, ...]:
    return ("extern",)


@dataclass(frozen=True)
class Rules:
    # what of the machine decides the lowering (which library path a rule picks): part of the disk-cache keys of
    # mem stages, so a cache shared across machines never hands one machine another's lowering
    facts: str = ""
    # select-layout's timer: seconds of a convolution problem in each layout, or None (estimated from the flops)
    conv_timer: Callable[..., Any] | None = field(default=None, compare=False)
    # bufferize: the externs whose library call allocates its result (taken as it comes, not copied to a slot)
    library_allocates: OpRule | None = field(default=None, compare=False)
    # orient-products: the products the library runs faster as their transpose
    transposed_products: OpRule | None = field(default=None, compare=False)
    # fold-bias: the products whose library call adds a bias (and a gelu) in its own pass
    biased_products: OpRule | None = field(default=None, compare=False)
    # the narrow dtypes ("bfloat16", "float16") in which the library runs a tensor-stage tn.addmm (a linear layer)
    # whole, on kernels of its own for that dtype; split-addmm splits the others into a float32 product
    library_addmm: tuple[str, ...] = ()
    # the narrow dtypes whose mm, bmm and convolutions the library runs only in a reference loop (no kernels of its
    # own): split-addmm computes those as float32 products of the widened operands, rounded once
    widened_products: tuple[str, ...] = ()
    # the narrow dtypes whose tn.sdpa_backward the library runs faster on float32 operands: split-addmm widens those
    widened_attention_backward: tuple[str, ...] = ()
    # fuse-quant: the library runs int8 convolutions and linear layers whole (oneDNN's qconv / qlinear) and sums them
    # exactly (before VNNI its kernels saturate int16 pairs: there the graph's float chain compiles as any float graph)
    int8_products: bool = False
    # fuse-quant: the target runs a weight-only int8 linear layer (float activations, an int8 weight with per-row
    # scales) as one tn.weight_int8_mm, the weight int8 between calls
    weight_int8_products: bool = False
    # the matrix-product lowerings worth compiling for a tensor-opt module, the incumbent first ("extern": the
    # library's, "loops": generated); with two or more the driver compiles each and the target chooses
    matmuls: Callable[[Any], tuple[str, ...]] = field(default=_library_products, compare=False)


__all__ = ["OpRule", "Rules"]
