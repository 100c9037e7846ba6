"""irc-opt replays the backend: every dumped stage, run through a plain `irc-opt --stage S FILE`, gives the
backend's own dump of each later stage S, text for text (the module records its target, options and arguments:
compiler.record, compiler.plan_of).

A replay continues a dump up to the next stage the backend dumps twice: a frozen graph's `tensor` dump precedes
freezing (the parameters' values are not in the text: its `freeze` dump is where a replay starts), and a tensor-opt
dump before the refold of a frozen graph's constants (a second tensor-opt dump) is continued only to tensor-opt.
"""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import irc
from irc.lowering.pipeline import STAGE_ORDER
from irc.tools.opt import main as irc_opt

STAGE = {"freeze": "tensor"}  # a dump's file name -> the stage its IR is at


def _dumps(folder: Path) -> list[tuple[str, Path]]:
    files = sorted(folder.glob("*.mlir"))
    return [(STAGE.get(f.stem.split("-", 1)[1], f.stem.split("-", 1)[1]), f) for f in files]


def _replays(folder: Path) -> list[tuple[Path, str, Path]]:
    """(source dump, stage, the backend's dump of it) for every later stage a replay of the source must give."""
    dumps, out = _dumps(folder), []
    for i, (stage, src) in enumerate(dumps):
        seen = {stage}
        for later, dst in dumps[i + 1 :]:
            if later in seen:  # the backend went on from a later dump of this stage
                break
            seen.add(later)
            if STAGE_ORDER.index(later) > STAGE_ORDER.index(stage):
                out.append((src, later, dst))
    return out


def _check_replays(dump_dir: Path, capsys, min_graphs: int = 1) -> int:
    folders = sorted(p for p in dump_dir.iterdir() if p.is_dir())
    assert len(folders) >= min_graphs, folders
    checked = 0
    for folder in folders:
        replays = _replays(folder)
        assert {stage for _, stage, _ in replays} >= {"tensor-opt", "loop", "mem"}, (folder, replays)
        for src, stage, dst in replays:
            capsys.readouterr()
            assert irc_opt(["--stage", stage, str(src)]) == 0, capsys.readouterr().err
            got = capsys.readouterr().out
            assert got.strip() == dst.read_text().strip(), f"irc-opt --stage {stage} {src.name} differs from {dst.name}"
            checked += 1
    return checked


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        return self.fc(torch.flatten(F.relu(self.conv2(x)), 1))


def test_inference_mlp_with_biases_replays(tmp_path, capsys):
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64))
    compiled = torch.compile(model, backend=irc.backend, options={"dump_dir": str(tmp_path)})
    with torch.no_grad():
        x = torch.randn(32, 256)
        torch.testing.assert_close(compiled(x), model(x))
    assert _check_replays(tmp_path, capsys) >= 6


def test_training_forward_and_backward_replay(tmp_path, capsys):
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8))
    compiled = torch.compile(model, backend=irc.backend, options={"dump_dir": str(tmp_path)})
    compiled(torch.randn(16, 64)).square().sum().backward()
    kinds = {p.name.split("-", 1)[1] for p in tmp_path.iterdir() if p.is_dir()}
    assert kinds == {"forward", "backward"}, kinds
    assert _check_replays(tmp_path, capsys, min_graphs=2) >= 12


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_convnet_in_nhwc_replays(tmp_path, capsys, train):
    torch._dynamo.reset()
    model = ConvNet().train(train)
    x = torch.randn(4, 3, 16, 16).to(memory_format=torch.channels_last)
    compiled = torch.compile(model, backend=irc.backend, options={"dump_dir": str(tmp_path), "layout": "nhwc"})
    if train:
        compiled(x).sum().backward()
    else:
        with torch.no_grad():
            compiled(x)
    assert _check_replays(tmp_path, capsys) >= 3


def test_dynamic_graph_replays(tmp_path, capsys):
    torch._dynamo.reset()

    def fn(x, w):
        return torch.softmax(x @ w, -1) * x.sum(-1, keepdim=True)

    compiled = torch.compile(fn, backend=irc.backend, dynamic=True, options={"dump_dir": str(tmp_path)})
    compiled(torch.randn(7, 32), torch.randn(32, 32))
    texts = [f.read_text() for f in tmp_path.rglob("*-mem.mlir")]
    assert texts and any("?x" in t for t in texts), "the graph was compiled with symbolic sizes"
    assert _check_replays(tmp_path, capsys) >= 6
