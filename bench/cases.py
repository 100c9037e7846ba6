"""The cases `python -m irc.bench.compare` runs: the demo models (bench/models.py) in inference, and
microbenchmarks whose ideal traffic is known, so their speed is also reported in GB/s.

    Case.make() -> (fn_or_module, inputs); Case.bytes(inputs, output) -> ideal bytes moved (or None)

A case may carry irc *variants* (a mode or options to compare, such as a layout or a pattern switched
off); each is timed as one more backend, `irc:<label>`, interleaved with the others.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .models import DEMOS


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], tuple]
    kind: str  # "model" or "micro"
    description: str = ""
    dynamic: bool | None = None
    bandwidth: bool = False  # memory-bound: report GB/s against the machine's copy bandwidth
    # further irc configurations timed beside the default one: (label, torch.compile kwargs), e.g.
    # ("nhwc", {"options": {"layout": "nhwc"}}) runs as backend "irc:nhwc"
    variants: tuple[tuple[str, dict], ...] = ()

    @property
    def backends(self) -> tuple[str, ...]:
        return ("eager", "inductor", "irc") + tuple(f"irc:{label}" for label, _ in self.variants)

    def compile_kwargs(self, backend: str) -> dict:
        """torch.compile's mode/options for an irc backend name ("irc" or "irc:<label>")."""
        return dict(self.variants).get(backend.partition(":")[2], {}) if ":" in backend else {}

    def bytes(self, inputs, output) -> int:
        outs = output if isinstance(output, (tuple, list)) else [output]
        tensors = [t for t in (*inputs, *outs) if isinstance(t, torch.Tensor)]
        return sum(t.numel() * t.element_size() for t in tensors)


def chain(x):
    return ((x * 2 + 1).relu() * x.sigmoid()).tanh()


def bw_chain(x, y):
    return (x * 2 + 1).relu() * y


def softmax_layer_norm(x):
    return F.layer_norm(torch.softmax(x, -1), (x.shape[-1],))


def row_sum(x):
    return x.sum(-1)


def column_sum(x):
    return x.sum(0)


def transpose_copy(x):
    return x.t().contiguous()


def transposed_pointwise(x):
    return x.t() * 2 + 1


def small_linear(x, w, b):
    return torch.relu(x @ w + b)


def _micro(fn, *shapes):
    def make():
        g = torch.Generator().manual_seed(0)
        return fn, tuple(torch.randn(*s, generator=g) for s in shapes)

    return make


def _model(demo):
    def make():
        model, inputs = demo.make()
        if isinstance(model, torch.nn.Module):
            model.eval()
        return model, inputs

    return make


MICRO = (
    Case("transcendental-chain", _micro(chain, (4096, 4096)), "micro", "((x*2+1).relu()*x.sigmoid()).tanh(), 4096x4096", bandwidth=True),
    Case("bandwidth-chain", _micro(bw_chain, (4096, 4096), (4096, 4096)), "micro", "(x*2+1).relu()*y, 4096x4096", bandwidth=True),
    Case("softmax-layernorm", _micro(softmax_layer_norm, (2048, 1024)), "micro", "layer_norm(softmax(x, -1)), 2048x1024",
         bandwidth=True),  # fmt: skip
    Case("row-sum", _micro(row_sum, (4096, 4096)), "micro", "x.sum(-1), 4096x4096", bandwidth=True),
)
# the compile modes (issue 8): their effect on an overhead-bound model, against eager, inductor and irc's default
MODES = (("reduce-overhead", {"mode": "reduce-overhead"}), ("max-autotune", {"mode": "max-autotune"}))
# what max-autotune's tile sizes and its generated-or-library matmul choice buy (issue 8)
MICRO += (
    Case("column-sum", _micro(column_sum, (4096, 4096)), "micro", "x.sum(0), 4096x4096", bandwidth=True,
         variants=MODES[1:]),  # fmt: skip
    Case("transpose-copy", _micro(transpose_copy, (2048, 2048)), "micro", "x.t().contiguous(), 2048x2048", bandwidth=True,
         variants=MODES[1:]),  # fmt: skip
    Case("transposed-pointwise", _micro(transposed_pointwise, (2048, 2048)), "micro",
         "x.t() * 2 + 1, 2048x2048 (eager returns it column-major)", bandwidth=True),  # fmt: skip
    Case("small-linear", _micro(small_linear, (16, 64), (64, 64), (64,)), "micro", "relu(x @ w + b), 16x64x64",
         variants=(*MODES, ("loops", {"options": {"matmul": "loops"}}))),  # fmt: skip
)
# the layout choices (issue 8): irc's default is layout=auto (the cost model); these force one layout everywhere
LAYOUTS = (("nchw", {"options": {"layout": "nchw"}}), ("nhwc", {"options": {"layout": "nhwc"}}))
VARIANTS = {"mlp-b32": MODES, "convnet-eval": LAYOUTS, "resnet18": LAYOUTS}
# the attention substitution (issue 8): irc's default replaces matmul-softmax-matmul by one scaled_dot_product_attention
ATTENTION = (("no-attention", {"options": {"attention": False}}),)
# inference freezing (issue 8): irc's default folds BatchNorm and constants of frozen parameters
FREEZE = (("no-freeze", {"options": {"freeze": False}}),)
VARIANTS.update({"mini-transformer": ATTENTION, "mini-transformer-mask": ATTENTION})
VARIANTS["convnet-eval"] = VARIANTS.get("convnet-eval", ()) + FREEZE
MODELS = tuple(Case(d.name, _model(d), "model", d.description, dynamic=d.dynamic, variants=VARIANTS.get(d.name, ()))
               for d in DEMOS)  # fmt: skip
CASES = {c.name: c for c in MODELS + MICRO}
