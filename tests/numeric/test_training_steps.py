"""Training steps through irc (issue 15, point 2): a compiled step makes no copy that eager's step does not
make, a training graph's weights are never prepacked (they change every step, and its saved activations are
new tensors every call), and gradients and parameters follow eager's over several steps.

A step is what bench/compare.py times: zero_grad, the compiled forward, the loss, backward, an eager SGD step.
"""

import copy
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import irc
from irc import report
from irc.bench.check import GRAD_TOL, assert_close, targets_for
from irc.bench.models import MiniTransformer, mlp
from irc.targets.cpu.libs import externs
from tests.conftest import compile_irc

COPIES = ("aten::copy_", "aten::contiguous", "aten::clone")


def _tiny_transformer():
    """Attention's backward multiplies transposed operands (q k^T, its gradients): transposed views reach mm/bmm."""
    torch.manual_seed(0)
    model = MiniTransformer(vocab=100, d_model=32, heads=4, layers=1, d_ff=64, max_len=16, dropout=0.0)
    return model, (torch.randint(0, 100, (4, 16)),)


class _HeadsAttention(torch.nn.Module):
    """Attention as transformers writes it: a layer_norm, q, k, v projections split into heads, torch's sdpa with a
    mask, the heads merged into the output projection; seq 7 (odd)."""

    def __init__(self, width: int = 32, heads: int = 4, seq: int = 7):
        super().__init__()
        self.q, self.k, self.v, self.o = (torch.nn.Linear(width, width) for _ in range(4))
        self.norm, self.heads = torch.nn.LayerNorm(width), heads
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, x):
        b, s, e = x.shape
        x = self.norm(x)

        def split(t):
            return t.view(b, s, self.heads, e // self.heads).transpose(1, 2)

        a = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)), attn_mask=self.mask)
        return self.o(a.transpose(1, 2).reshape(b, s, e)).sum(1)


def _heads_attention():
    torch.manual_seed(0)
    return _HeadsAttention(), (torch.randn(3, 7, 32),)


def _conv_net():
    """Convolutions' gradients (tn.convolution_backward, input and weight, and bias): odd 9x9 images, a stride. (No
    BatchNorm: the runtime copies its new running statistics into the module's buffers, where eager's kernel writes
    them in place: two copies of C floats a step.)"""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2), nn.Flatten(), nn.Linear(8 * 4 * 4, 5)
    )
    return model, (torch.randn(4, 3, 9, 9),)


MODELS = {
    "mlp-b32": lambda: mlp(32),
    "mlp-b8": lambda: mlp(8),
    "tiny-transformer": _tiny_transformer,
    "heads-attention": _heads_attention,
    "conv-net": _conv_net,
}
OPTIONS = {"conv-net": {"layout": "nchw"}}
"""conv-net computes NCHW, as eager does: select-layout's cost model does not count the reorder of a changing
weight (training) that each step of an NHWC convolution costs, and may pick NHWC for these small images."""


def _stepper(model, inputs, target, compiled: bool, **options):
    fwd = compile_irc(model, **options) if compiled else model
    opt = torch.optim.SGD(model.parameters(), lr=0.05)

    def step(*args):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(fwd(*(args or inputs)), target)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def _pair(name):
    """(eager step, irc step, the eager model, the compiled model, inputs): twin models, the same target."""
    model, inputs = MODELS[name]()
    model.train()
    target = targets_for(copy.deepcopy(model)(*inputs))
    mine = copy.deepcopy(model)
    mine_step = _stepper(mine, inputs, target, True, **OPTIONS.get(name, {}))
    return _stepper(model, inputs, target, False), mine_step, model, mine, inputs


def _copies(step) -> Counter:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return Counter(e.name for e in prof.events() if e.name in COPIES)


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_step_copies_no_more_than_eager(name):
    """Per step, irc's aten copy_/contiguous/clone calls (its externs' own included) are at most eager's: a
    transposed operand reaches BLAS as a transpose flag, a result is written into its buffer, not copied."""
    eager, compiled, *_ = _pair(name)
    for _ in range(2):  # compile, then a step on weights that changed
        eager(), compiled()
    want, got = _copies(eager), _copies(compiled)
    assert all(got[op] <= want[op] for op in COPIES), f"irc {dict(got)} against eager {dict(want)}"


def test_training_weights_never_prepacked(monkeypatch):
    """oneDNN prepacking is for weights that stay (frozen inference): in a training graph none is packed, from
    the first call on (it was: the first step packed every weight, and a backward operand that arrived as the
    same tensor every step, the batch, stayed packed, its transposed partner copied for oneDNN)."""
    packs = []
    real = externs.LinearKernel.packed
    monkeypatch.setattr(externs.LinearKernel, "packed", lambda self, m: packs.append(m) or real(self, m))
    _, compiled, *_ = _pair("mlp-b32")
    for _ in range(3):
        compiled()
    assert packs == []


@pytest.mark.parametrize("name", list(MODELS))
def test_training_graphs_run_no_reference_evaluator(name):
    """Every kernel and extern of a training step's forward and backward runs JITed or as a library call: torch's
    flash attention and its backward, a convolution's gradients (they ran on the mem-stage interpreter, each result
    copied into a planned buffer)."""
    _, compiled, *_ = _pair(name)
    start = report.mark()
    compiled()
    graphs = report.reports_since(start).graphs
    assert graphs and all(not g.fallbacks and not g.target_fallbacks for g in graphs), str(report.reports_since(start))


@pytest.mark.parametrize("name", list(MODELS))
def test_steps_follow_eager(name):
    """Three steps on new inputs each: the loss, every gradient and every parameter after the optimizer step
    equal eager's within float32 tolerance (bench/check.py's GRAD_TOL)."""
    eager, compiled, model, mine, inputs = _pair(name)
    g = torch.Generator().manual_seed(1)
    for i in range(3):
        x = inputs[0]
        batch = (
            torch.randn(x.shape, generator=g) if x.is_floating_point() else torch.randint(0, 100, x.shape, generator=g),
        )
        assert_close(f"loss of step {i}", compiled(*batch), eager(*batch), GRAD_TOL)
        for (n, p), q in zip(model.named_parameters(), mine.parameters()):
            assert_close(f"grad of {n} in step {i}", q.grad, p.grad, GRAD_TOL)
            assert_close(f"{n} after step {i}", q, p, GRAD_TOL)


def _adamw():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 16))
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def test_compiled_adamw_step_follows_eager():
    """torch.compile(opt.step) for AdamW: Dynamo writes its lerp_/addcmul_/addcdiv_ as inductor's prims.fma,
    which irc decomposes (no eager fallback in the graph); the parameters follow eager's for three steps."""
    (model, opt), (twin, twin_opt) = _adamw(), _adamw()
    step = compile_irc(twin_opt.step)
    for i in range(3):
        opt.step()
        step()
        for (n, p), q in zip(model.named_parameters(), twin.parameters()):
            assert_close(f"{n} after step {i}", q, p, GRAD_TOL)
    assert irc.explain(_adamw()[1].step).fallbacks == []


def test_forward_returns_no_copy_of_what_it_saves_from_its_inputs(tmp_path):
    """A training forward saves its input and each transposed weight for the backward: views of its inputs,
    which the runtime replays on them, and each activation with its detach, a view of it, replayed likewise. The
    program must not compute them too: its @main returns neither a transposed 1024x1024 weight nor a copy of the
    batch (it did, one 1024x1024 transpose per layer per step) nor a copy of an activation."""
    model, (x,) = mlp(32)
    fwd = compile_irc(model, dump_dir=str(tmp_path))
    F.cross_entropy(fwd(x), torch.zeros(32, dtype=torch.long)).backward()
    (mem,) = tmp_path.glob("graph*-forward/*-mem.mlir")
    ret = next(line for line in mem.read_text().splitlines() if "func.return %" in line)
    assert "1024x1024" not in ret
    assert ret.count("memref<32x1024xf32>") == 2  # the two activations: not x, nor their detached twins (views)


class _GptMlp(torch.nn.Module):
    """GPT-2's MLP as transformers writes it: Conv1D layers (addmm of the rows and a weight stored input-major, so a
    weight's gradient multiplies the transposed input) around GELU's tanh approximation written out."""

    def __init__(self, width: int = 31, inner: int = 67):
        super().__init__()
        self.w1, self.b1 = torch.nn.Parameter(torch.randn(width, inner) / 6), torch.nn.Parameter(torch.randn(inner))
        self.w2, self.b2 = torch.nn.Parameter(torch.randn(inner, 5) / 8), torch.nn.Parameter(torch.randn(5))

    def forward(self, x):
        h = torch.addmm(self.b1, x.view(-1, x.size(-1)), self.w1).view(*x.shape[:-1], -1)
        g = 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * torch.pow(h, 3.0))))
        return torch.addmm(self.b2, g.view(-1, g.size(-1)), self.w2)


def test_forward_saves_less_and_the_backward_recomputes(tmp_path):
    """GPT-2's MLP: the backward reads GELU's input h, tanh's result and GELU's output (the second weight's
    gradient, as its transpose). The min-cut partition saves those three and the backward recomputes the other
    steps it needs (0.5 * h, 1 + tanh): the default partition saved five 39x67 tensors. None is saved transposed:
    AOT's min-cut saves GELU's output as the transposed view the backward reads, which irc's forward would write
    as a transposing copy; the backward's product reads it transposed for free. Gradients stay eager's."""
    torch.manual_seed(0)
    model = _GptMlp()
    x = torch.randn(13, 3, 31)
    twin = copy.deepcopy(model)
    fwd = compile_irc(model, dump_dir=str(tmp_path))
    fwd(x).square().sum().backward()
    twin(x).square().sum().backward()
    (mem,) = tmp_path.glob("graph*-forward/*-mem.mlir")
    ret = next(line for line in mem.read_text().splitlines() if "func.return %" in line)
    assert ret.count("x67xf32") == 3 and "67x39" not in ret, ret
    for (n, p), q in zip(model.named_parameters(), twin.parameters(), strict=True):
        assert_close(f"grad of {n}", p.grad, q.grad, GRAD_TOL)


def _pure_copies(mem_text: str) -> list[str]:
    """The kernels of a mem-stage module whose body only loads and yields (a copy)."""
    out = []
    for chunk in mem_text.split("func.func @")[1:]:
        body = [ln.strip() for ln in chunk.splitlines()[2:] if ln.strip().startswith("%") or "loop.yield" in ln]
        if chunk.startswith("kernel") and len(body) == 2 and "loop.load" in body[0]:
            out.append(chunk.split("(")[0])
    return out


class _ReshapedNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.norm, self.b = torch.nn.Linear(24, 40), torch.nn.LayerNorm(40), torch.nn.Linear(40, 7)

    def forward(self, x):
        return self.b(self.norm(self.a(x).view(3, 5, 40)))


def test_forward_saves_a_reshaped_activation_without_copying_it(tmp_path):
    """A 3-d layer_norm output feeds the next Linear as its (rows, features) reshape, which the forward also saves
    for the backward. The reshape aliases the layer_norm's buffer (returned as the graph's output): no copy kernel,
    as eager makes none (the mini-transformer's forward made one per layer_norm; gradients as eager's)."""
    torch.manual_seed(0)
    model = _ReshapedNorm()
    mine, x = copy.deepcopy(model), torch.randn(15, 24)  # 2-d in: a 3-d input's own reshape would copy (any strides)
    fwd = compile_irc(mine, dump_dir=str(tmp_path))
    fwd(x).square().sum().backward()
    model(x).square().sum().backward()
    (mem,) = tmp_path.glob("graph*-forward/*-mem.mlir")
    assert _pure_copies(mem.read_text()) == []
    for (n, p), q in zip(model.named_parameters(), mine.parameters()):
        assert_close(f"{n}.grad", q.grad, p.grad, GRAD_TOL)


def test_attention_step_takes_flash_results_as_they_come(tmp_path):
    """torch's flash attention and its backward (tn.sdpa with its logsumexp, tn.sdpa_backward) are library calls
    whose results are taken in the heads-last layouts the kernels write: no copy kernel in either program, and the forward returns q, k, v and the attention output for the backward as views in eager's
    layout (each was copied, then copied again into eager's strides: 32 copies of 2 MB a train-hf-bert step)."""
    eager, _, model, mine, inputs = _pair("heads-attention")
    fwd = compile_irc(mine, dump_dir=str(tmp_path))
    target, start = targets_for(model(*inputs)), report.mark()
    F.cross_entropy(fwd(*inputs), target).backward()
    F.cross_entropy(model(*inputs), target).backward()
    for (n, p), q in zip(model.named_parameters(), mine.parameters()):
        assert_close(f"{n}.grad", q.grad, p.grad, GRAD_TOL)
    assert [g.kind for g in report.reports_since(start).graphs] == ["forward", "backward"]
    for stage in tmp_path.glob("graph*/*-mem.mlir"):
        text = stage.read_text()
        assert _pure_copies(text) == [], stage.parent.name
        assert "heads_last" in text and ("tn.sdpa_backward" in text or "tn.sdpa " in text), stage.parent.name
