"""Modules imported from real FX graphs print, parse back and print again unchanged (pretty and generic form).

The graphs come from `torch.compile(..., backend=irc.backend, options={"dump_dir": ...})`, the way a
user's compile produces them, including dynamic shapes (index arguments) and backward graphs.
"""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import irc
from irc.dialects import ALL_DIALECTS
from irc.ir import make_context, parse_module, print_module


def tensor_stages(tmp_path: Path, fn, *inputs, dynamic=None, backward=False) -> list[str]:
    torch._dynamo.reset()
    compiled = torch.compile(
        fn, backend=irc.backend, dynamic=dynamic, options={"dump_dir": str(tmp_path), "strict": True}
    )
    out = compiled(*inputs)
    if backward:
        out.sum().backward()
    texts = [p.read_text() for p in sorted(tmp_path.glob("*/*-tensor.mlir"))]
    assert texts, f"no tensor stage dumped under {tmp_path}"
    return texts


def mixed(x, w, b):
    h = F.layer_norm(x, x.shape[-1:]) @ w.t() + b
    h = torch.softmax(F.gelu(h), dim=-1).reshape(x.shape[0], -1, 2)
    return torch.cat([h.amax(-1), h.mean(-1)], dim=-1).permute(1, 0)[1:, :].clamp(min=0.1)


CASES = {
    "static": dict(dynamic=False),
    "dynamic": dict(dynamic=True),
    "backward": dict(dynamic=False, backward=True),
}


@pytest.mark.parametrize("case", CASES)
def test_fx_import_round_trips(tmp_path, case):
    kw = CASES[case]
    x, w, b = torch.randn(6, 16), torch.randn(8, 16), torch.randn(8)
    if kw.get("backward"):
        x.requires_grad_()
        w.requires_grad_()
    ctx = make_context(ALL_DIALECTS)
    for text in tensor_stages(tmp_path, mixed, x, w, b, **kw):
        module = parse_module(ctx, text)
        module.verify()
        assert print_module(module) == text, "pretty print -> parse -> print changed the text"
        generic = print_module(module, generic=True)
        again = parse_module(ctx, generic)
        again.verify()
        assert print_module(again) == text, "generic print -> parse -> pretty print changed the text"
        assert print_module(again, generic=True) == generic


def test_dynamic_graph_has_index_arguments(tmp_path):
    (text,) = tensor_stages(
        tmp_path, lambda x: torch.softmax(x, -1).view(-1) * x.shape[0], torch.randn(5, 7), dynamic=True
    )
    assert ": index" in text and "?x" in text
