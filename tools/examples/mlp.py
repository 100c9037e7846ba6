"""A two-layer MLP with layer norm and GELU, for trying irc-opt on a real model.

irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32
irc-opt --model irc.tools.examples.mlp:make_mlp --inputs 32x1024xf32 --stage tensor-opt
irc-opt --model irc.tools.examples.mlp:gelu_residual --inputs 8x64xf32 8x64xf32
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, dim: int = 1024, hidden: int = 4096):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def make_mlp(dim: int = 1024, hidden: int = 4096) -> nn.Module:
    """The factory irc-opt calls: `--model irc.tools.examples.mlp:make_mlp` (inputs: N x dim, f32)."""
    torch.manual_seed(0)
    return MLP(dim, hidden).eval()


def gelu_residual():
    """A plain function works as well: the factory returns any callable of tensors."""
    return lambda x, y: torch.nn.functional.gelu(x) * torch.sigmoid(y) + x
