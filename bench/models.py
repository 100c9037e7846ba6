"""The demo models: used by the demo (`python -m irc.bench.demo`), the numeric tests and the benchmarks.

Every factory returns `(model_or_fn, example_inputs)` with a fixed seed, so two calls build
identical models (one to run eagerly, one to compile); the `make_*` factories return the model
alone, for `irc-opt --model irc.bench.models:make_mlp --inputs 32x1024xf32`.

    MLP              Linear(1024,1024)-ReLU-Linear(1024,1024)-ReLU-Linear(1024,10), batch 32 or 1024
    ConvNet          Conv-BN-ReLU-Conv-BN-ReLU-flatten-Linear on (32,3,32,32), eval or train
    ResNet18         basic blocks, strided convs with 1x1 downsampling, residual adds, adaptive average
                     pooling, fc; eval on (8,3,224,224) in the benchmark
    MiniTransformer  embeddings + 4 post-norm encoder blocks (hand-written attention) + classifier
    TorchTransformer torch's own nn.TransformerEncoder (embeddings, encoder layers, classifier)
    SelfAttention    torch's own nn.MultiheadAttention in a pre-norm residual block, mean-pooled
    graph_break      Python control flow on a tensor value: Dynamo splits the function in two
    attention_pool   a sequence-length-dynamic function (compiled with dynamic=True, or
                     recompiled with a dynamic dim by automatic dynamic on a second size)
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

# -- MLP ---------------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, features: int = 1024, hidden: int = 1024, classes: int = 10):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes)
        )

    def forward(self, x):
        return self.layers(x)


def mlp(batch: int = 32, seed: int = 0):
    """MLP on a (batch, 1024) input; the demo runs batch 32 and batch 1024."""
    torch.manual_seed(seed)
    return MLP(), (torch.randn(batch, 1024),)


# -- ConvNet -----------------------------------------------------------------------------------


class ConvNet(nn.Module):
    def __init__(self, classes: int = 10, size: int = 32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.Conv2d(64, 128, 3, padding=1),
            nn.BatchNorm2d(128),
            nn.ReLU(),
        )
        self.head = nn.Linear(128 * size * size, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def convnet(batch: int = 32, train: bool = False, seed: int = 0):
    """ConvNet on (batch, 3, 32, 32), in eval mode (BatchNorm uses running stats) or train mode."""
    torch.manual_seed(seed)
    model = ConvNet()
    # Non-trivial running statistics and affine parameters, so eval-mode BatchNorm is not an identity.
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.running_mean.uniform_(-0.1, 0.1)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.1, 0.1)
    model.train(train)
    return model, (torch.randn(batch, 3, 32, 32),)


# -- ResNet-18 ----------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    """3x3 conv-BN-ReLU, 3x3 conv-BN, plus the input (through a strided 1x1 conv-BN when the shape changes), ReLU."""

    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    """ResNet-18: 7x7/2 stem, 3x3/2 max pool, 4 stages of 2 basic blocks (64, 128, 256, 512 channels), global average pool, fc."""

    def __init__(self, classes: int = 1000, width: int = 64):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        blocks, cin = [], width
        for i, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def _perturb_batch_norms(model: nn.Module) -> None:
    """Non-trivial running statistics and affine parameters, so eval-mode BatchNorm is not an identity."""
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.running_mean.uniform_(-0.1, 0.1)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.1, 0.1)


def resnet18(batch: int = 8, size: int = 224, classes: int = 1000, train: bool = False, seed: int = 0):
    """ResNet-18 on (batch, 3, size, size); the benchmark runs batch 8 at 224x224, the tests a small input."""
    torch.manual_seed(seed)
    model = ResNet18(classes)
    _perturb_batch_norms(model)
    model.train(train)
    return model, (torch.randn(batch, 3, size, size),)


# -- MiniTransformer ---------------------------------------------------------------------------


class MultiHeadAttention(nn.Module):
    """Self-attention written out: one fused qkv projection, softmax(q k^T / sqrt(d) + mask) v."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        assert d_model % heads == 0
        self.heads, self.head_dim = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)  # 3 x (b, h, n, hd)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if mask is not None:  # (b, n) bool, True where a key may be attended to
            scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
        attn = self.dropout(torch.softmax(scores, dim=-1))
        y = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, d)
        return self.out(y)


class EncoderBlock(nn.Module):
    """Post-norm: x = LN(x + attn(x)); x = LN(x + ffn(x))."""

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, heads, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.dropout(self.attn(x, mask)))
        return self.norm2(x + self.dropout(self.ff(x)))


class MiniTransformer(nn.Module):
    def __init__(
        self,
        vocab: int = 10000,
        d_model: int = 256,
        heads: int = 8,
        layers: int = 4,
        d_ff: int = 1024,
        max_len: int = 512,
        classes: int = 10,
        dropout: float = 0.1,
    ):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(EncoderBlock(d_model, heads, d_ff, dropout) for _ in range(layers))
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids, mask=None):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.dropout(self.tokens(ids) + self.positions(pos))
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x[:, 0])  # classify on token 0


def mini_transformer(batch: int = 16, seq: int = 128, dropout: float = 0.0, mask: bool = False, seed: int = 0):
    """MiniTransformer on (batch, seq) token ids; with mask=True also a key-padding mask."""
    torch.manual_seed(seed)
    model = MiniTransformer(dropout=dropout)
    ids = torch.randint(0, 10000, (batch, seq))
    if not mask:
        return model, (ids,)
    lengths = torch.randint(seq // 2, seq + 1, (batch,))
    keep = torch.arange(seq)[None, :] < lengths[:, None]
    return model, (ids, keep)


# -- torch's own transformer modules ------------------------------------------------------------


class TorchTransformer(nn.Module):
    """Token + position embeddings, nn.TransformerEncoder (post-norm GELU layers), classifier on the mean.
    In eval mode without grad torch runs each layer as one fused op (the encoder fast path)."""

    def __init__(
        self,
        vocab: int = 10000,
        d_model: int = 256,
        heads: int = 8,
        layers: int = 4,
        d_ff: int = 1024,
        max_len: int = 512,
        classes: int = 10,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids, pad=None):  # pad: (b, n) bool, True where a token is padding
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        return self.head(self.encoder(x, src_key_padding_mask=pad).mean(1))


def torch_transformer(batch: int = 16, seq: int = 128, mask: bool = False, seed: int = 0, **config):
    """TorchTransformer (default d256 h8 L4 ff1024, like MiniTransformer) on (batch, seq) ids; mask=True adds a
    key-padding mask. `config` overrides the sizes (the tests use tiny ones)."""
    torch.manual_seed(seed)
    model = TorchTransformer(**config)
    ids = torch.randint(0, model.tokens.num_embeddings, (batch, seq))
    if not mask:
        return model, (ids,)
    lengths = torch.randint(seq // 2, seq + 1, (batch,))
    return model, (ids, torch.arange(seq)[None, :] >= lengths[:, None])


class SelfAttention(nn.Module):
    """x + MHA(LN(x)) with torch's nn.MultiheadAttention (fused in-projection, SDPA inside), then mean and a classifier."""

    def __init__(self, d_model: int = 256, heads: int = 8, classes: int = 10):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.head = nn.Linear(d_model, classes)

    def forward(self, x, pad=None):
        h = self.norm(x)
        x = x + self.attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]
        return self.head(x.mean(1))


def self_attention(
    batch: int = 16, seq: int = 128, d_model: int = 256, heads: int = 8, mask: bool = False, seed: int = 0
):
    """SelfAttention on (batch, seq, d_model) activations; mask=True adds a key-padding mask."""
    torch.manual_seed(seed)
    model, x = SelfAttention(d_model, heads), torch.randn(batch, seq, d_model)
    if not mask:
        return model, (x,)
    lengths = torch.randint(seq // 2, seq + 1, (batch,))
    return model, (x, torch.arange(seq)[None, :] >= lengths[:, None])


# -- functions ---------------------------------------------------------------------------------


def graph_break_fn(x, w):
    """Python control flow on a tensor value: `if h.sum() > 0` forces Dynamo to break the graph."""
    h = torch.tanh(x @ w)
    if h.sum() > 0:
        out = torch.relu(h) * 2
    else:
        out = torch.sigmoid(h) - 1
    return out.mean(-1)


def graph_break(seed: int = 0):
    torch.manual_seed(seed)
    return graph_break_fn, (torch.randn(64, 128), torch.randn(128, 128) * 0.1)


def attention_pool(x, w):
    """Attention pooling over a sequence of any length: softmax over dim 1 of <x, w>, then a weighted sum."""
    scores = (x * w).sum(-1) / math.sqrt(x.shape[-1])
    attn = torch.softmax(scores, dim=1)
    return (attn.unsqueeze(-1) * x).sum(1) + x.mean(1) * 0.5


def dynamic_seq(seq: int = 48, seed: int = 0):
    """attention_pool on (8, seq, 32); the demo and tests call it at several sequence lengths.

    Keep seq apart from the other sizes (8, 32): Dynamo's duck sizing would tie equal sizes
    together and recompile when they part.
    """
    torch.manual_seed(seed)
    return attention_pool, (torch.randn(8, seq, 32), torch.randn(32))


# -- model-only factories, for `irc-opt --model irc.bench.models:make_mlp --inputs 32x1024xf32` ------------


def make_mlp():
    """inputs: 32x1024xf32 (or 1024x1024xf32)"""
    return mlp()[0].eval()


def make_convnet():
    """inputs: 32x3x32x32xf32"""
    return convnet(train=False)[0]


def make_resnet18():
    """inputs: 8x3x224x224xf32 (or a smaller image, e.g. 2x3x32x32xf32)"""
    return resnet18(train=False)[0]


def make_mini_transformer():
    """inputs: 16x128xi64"""
    return mini_transformer(dropout=0.0)[0].eval()


def make_torch_transformer():
    """inputs: 16x128xi64"""
    return torch_transformer()[0].eval()


def make_self_attention():
    """inputs: 16x128x256xf32"""
    return self_attention()[0].eval()


def make_graph_break():
    """inputs: 64x128xf32 128x128xf32"""
    return graph_break_fn


def make_attention_pool():
    """inputs: 8x48x32xf32 32xf32 (add --dynamic for a symbolic sequence length)"""
    return attention_pool


# -- the registry the demo and the tests walk ----------------------------------------------------


@dataclass(frozen=True)
class Demo:
    name: str
    make: Callable[[], tuple]  # () -> (model_or_fn, example_inputs)
    train: bool = False  # also check (and time) a training step
    dynamic: bool | None = None  # torch.compile(dynamic=...)
    # further input tuples to call with after the example inputs (sequence lengths, sizes)
    more_inputs: Callable[[], list[tuple]] = field(default=lambda: [])
    expect_dynamo_graphs: int | None = None  # how many Dynamo graphs a correct compile produces
    description: str = ""


def _seq_inputs(lengths):
    return lambda: [dynamic_seq(n, seed=i + 1)[1] for i, n in enumerate(lengths)]


DEMOS = (
    Demo("mlp-b32", lambda: mlp(32), train=True, description="MLP 1024-1024-1024-10, batch 32"),
    Demo("mlp-b1024", lambda: mlp(1024), train=True, description="MLP 1024-1024-1024-10, batch 1024"),
    Demo("convnet-eval", lambda: convnet(train=False), description="ConvNet, eval mode (BatchNorm running stats)"),
    Demo(
        "convnet-train",
        lambda: convnet(train=True),
        train=True,
        description="ConvNet, train mode (batch statistics, running-stat updates)",
    ),
    Demo("resnet18", lambda: resnet18(8, 224), description="ResNet-18, eval mode, batch 8, 3x224x224"),
    Demo(
        "mini-transformer",
        lambda: mini_transformer(dropout=0.0),
        train=True,
        description="MiniTransformer d256 h8 L4, ids (16,128)",
    ),
    Demo(
        "mini-transformer-mask",
        lambda: mini_transformer(dropout=0.0, mask=True),
        description="MiniTransformer with a key-padding mask",
    ),
    Demo(
        "torch-transformer",
        lambda: torch_transformer(),
        train=True,
        description="nn.TransformerEncoder d256 h8 L4 (GELU), ids (16,128)",
    ),
    Demo(
        "torch-transformer-mask",
        lambda: torch_transformer(mask=True),
        description="nn.TransformerEncoder with a key-padding mask",
    ),
    Demo(
        "torch-mha",
        lambda: self_attention(),
        train=True,
        description="nn.MultiheadAttention d256 h8 in a pre-norm block, (16,128,256)",
    ),
    Demo(
        "graph-break",
        graph_break,
        expect_dynamo_graphs=2,
        description="`if x.sum() > 0:` on a tensor value splits the function",
    ),
    Demo(
        "dynamic-seq",
        lambda: dynamic_seq(48),
        dynamic=True,
        more_inputs=_seq_inputs((17, 128, 5)),
        expect_dynamo_graphs=1,
        description="attention pooling, dynamic=True, lengths 48/17/128/5",
    ),
    Demo(
        "auto-dynamic-seq",
        lambda: dynamic_seq(48),
        more_inputs=_seq_inputs((96, 33, 7)),
        expect_dynamo_graphs=2,
        description="attention pooling, automatic dynamic: static first, one dynamic recompile",
    ),
)

from .hf_models import demos as hf_demos  # noqa: E402 - BERT, GPT-2 when transformers is installed

DEMOS += hf_demos()
BY_NAME = {d.name: d for d in DEMOS}
