"""The cases `python -m irc.bench.compare` runs: the demo models (bench/models.py) in inference, and
microbenchmarks whose ideal traffic is known, so their speed is also reported in GB/s; training steps of
the trainable demo models and HF BERT/GPT-2 (kind "train"), and AdamW's step compiled (kind "optimizer").

    Case.make() -> (fn_or_module, inputs); Case.bytes(inputs, output) -> ideal bytes moved (or None)
    a "train" or "optimizer" case: Case.make(compile, amp=None, reference=False) -> step, a callable of no
    arguments, where compile(fn) is the backend's (torch.compile with it, or the identity for eager); a
    train step runs its forward and loss under autocast(amp) (backward and SGD outside it, as autocast
    training is written); reference=True: the model and its inputs in float64 without autocast (the step a
    low-precision run measures errors against); AdamW's step ignores both (autocast changes none of its ops)

A case may carry irc *variants* (a mode or options to compare, such as a layout or a pattern switched
off); each is timed as one more backend, `irc:<label>`, interleaved with the others.
"""

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import copy

import torch
import torch.nn.functional as F
from torch import nn

from . import hf_models
from .check import targets_for
from .models import DEMOS


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], tuple]
    kind: str  # "model", "micro", "train" or "optimizer"
    description: str = ""
    dynamic: bool | None = None
    bandwidth: bool = False  # memory-bound: report GB/s against the machine's copy bandwidth
    # further irc configurations timed beside the default one: (label, torch.compile kwargs), e.g.
    # ("nhwc", {"options": {"layout": "nhwc"}}) runs as backend "irc:nhwc"
    variants: tuple[tuple[str, dict], ...] = ()
    skip: Callable[[], str | None] = lambda: None  # why the case cannot run here (a missing package), else None

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


# bench/compare.py and bench/roofline.py --dtype: autocast's dtype (f32: no autocast)
DTYPES = {"f32": None, "bf16": torch.bfloat16, "f16": torch.float16}


def autocast(dtype: torch.dtype | None):
    """torch.autocast on the CPU in `dtype` (bench/compare.py --dtype bf16|f16); nothing for float32 (None)."""
    return torch.autocast("cpu", dtype=dtype) if dtype is not None else nullcontext()


def float64(x):
    """A float tensor in float64, anything else as it is: a case's inputs for its float64 reference."""
    return x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x


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


def wide_gelu(x):
    """gelu of activations of magnitude up to ~60 (x times 16): erf's far side, where subnormals once cost 8x."""
    return F.gelu(x * 16)


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


def bucketize(x, boundaries):
    return torch.bucketize(x, boundaries)


def _search(n: int, m: int):
    """n values against m sorted boundaries."""

    def make():
        g = torch.Generator().manual_seed(0)
        return bucketize, (torch.randn(n, generator=g), torch.randn(m, generator=g).sort().values)

    return make


def _model(demo):
    def make():
        model, inputs = demo.make()
        if isinstance(model, torch.nn.Module):
            model.eval()
        return model, inputs

    return make


MICRO = (
    Case(
        "transcendental-chain",
        _micro(chain, (4096, 4096)),
        "micro",
        "((x*2+1).relu()*x.sigmoid()).tanh(), 4096x4096",
        bandwidth=True,
    ),
    Case(
        "bandwidth-chain",
        _micro(bw_chain, (4096, 4096), (4096, 4096)),
        "micro",
        "(x*2+1).relu()*y, 4096x4096",
        bandwidth=True,
    ),
    Case(
        "softmax-layernorm",
        _micro(softmax_layer_norm, (2048, 1024)),
        "micro",
        "layer_norm(softmax(x, -1)), 2048x1024",
        bandwidth=True,
    ),
    Case("row-sum", _micro(row_sum, (4096, 4096)), "micro", "x.sum(-1), 4096x4096", bandwidth=True),
    Case("wide-gelu", _micro(wide_gelu, (2048, 1024)), "micro", "gelu(x * 16), 2048x1024", bandwidth=True),
    # generated binary search (frontend/searching.py) against eager's kernel
    Case("bucketize", _search(1 << 20, 1000), "micro", "torch.bucketize(x, boundaries), 2^20 values, 1,000 boundaries"),
)
# the compile modes (issue 8): their effect on an overhead-bound model, against eager, inductor and irc's default
MODES = (("reduce-overhead", {"mode": "reduce-overhead"}), ("max-autotune", {"mode": "max-autotune"}))
# what max-autotune's tile sizes and its generated-or-library matmul choice buy (issue 8)
MICRO += (
    Case(
        "column-sum",
        _micro(column_sum, (4096, 4096)),
        "micro",
        "x.sum(0), 4096x4096",
        bandwidth=True,
        variants=MODES[1:],
    ),
    Case(
        "transpose-copy",
        _micro(transpose_copy, (2048, 2048)),
        "micro",
        "x.t().contiguous(), 2048x2048",
        bandwidth=True,
        variants=MODES[1:],
    ),
    Case(
        "transposed-pointwise",
        _micro(transposed_pointwise, (2048, 2048)),
        "micro",
        "x.t() * 2 + 1, 2048x2048 (eager returns it column-major)",
        bandwidth=True,
    ),
    Case(
        "small-linear",
        _micro(small_linear, (16, 64), (64, 64), (64,)),
        "micro",
        "relu(x @ w + b), 16x64x64",
        variants=(*MODES, ("loops", {"options": {"matmul": "loops"}})),
    ),
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
MODELS = tuple(
    Case(d.name, _model(d), "model", d.description, dynamic=d.dynamic, variants=VARIANTS.get(d.name, ())) for d in DEMOS
)


# -- training (issue 15) ------------------------------------------------------------------------------
def _train(factory):
    """make(compile, amp, reference) for a training step of factory()'s model: zero_grad, the forward compiled,
    cross-entropy (both under autocast(amp)), backward, an eager SGD step. The step returns its loss: every
    backend runs as many steps from the same weights, so compare checks the first step's losses against eager's
    (and, for a low-precision run, against the reference=True step's: the model and its inputs in float64)."""

    def make(compile_fn, amp: torch.dtype | None = None, reference: bool = False):
        model, inputs = factory()
        model.train()
        target = targets_for(copy.deepcopy(model)(*inputs))  # a twin: a train-mode forward moves BatchNorm statistics
        if reference:
            model, inputs, amp = model.double(), tuple(float64(x) for x in inputs), None
        fwd = compile_fn(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            with autocast(amp):
                loss = F.cross_entropy(fwd(*inputs), target)
            loss.backward()
            opt.step()
            return loss.detach()

        step.model = model  # what the step trains, for the tests
        return step

    return make


def _adamw_step(compile_fn, amp=None, reference=False):
    """torch.compile(opt.step) for AdamW over 8 Linear(512, 512) with fixed gradients; the step returns the first
    weight (live: compare reads it after every backend's first two steps). `amp` and `reference` are ignored:
    autocast lowers no op of an optimizer step, so a low-precision run times it as it is."""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(512, 512) for _ in range(8)])
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step, weight = compile_fn(opt.step), model[0].weight

    def run():
        step()
        return weight

    return run


def _no_transformers() -> str | None:
    return None if hf_models.available() else "transformers is not installed: pip install -e .[hf]"


TRAIN = tuple(
    Case(f"train-{d.name.removesuffix('-train')}", _train(d.make), "train", f"train step: {d.description}")
    for d in DEMOS
    if d.train and not d.name.startswith("hf-")
)
TRAIN += (
    Case(
        "train-hf-bert",
        _train(hf_models.bert),
        "train",
        "train step: transformers BERT h256 L4, ids (16,128), mask",
        skip=_no_transformers,
    ),
    Case(
        "train-hf-gpt2",
        _train(hf_models.gpt2),
        "train",
        "train step: transformers GPT-2 h256 L4, ids (16,128)",
        skip=_no_transformers,
    ),
    Case("adamw-step", _adamw_step, "optimizer", "torch.compile(opt.step): AdamW over 8 Linear(512, 512)"),
)
TRAINING = ("train", "optimizer")  # kinds whose make takes the compile function and gives a step
CASES = {c.name: c for c in MODELS + MICRO + TRAIN}
