"""orient-products on the CPU target (lowering/orient_products.py, mm_rules.computes_transposed): a training
forward's x @ W^T with few rows runs as W @ x^T on MKL's path (and in bf16 where torch runs it on oneDNN's AMX
kernel), its kernel reading the column-major result (a returned one copied back row-major); every
other product keeps its orientation (also one that oneDNN's plain path takes, where externs.onednn_outruns_mkl:
there only products under libs/tuning.py SMALL_FLOPS, which stay on MKL, turn), and the numbers stay eager's."""

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import irc
from irc.targets.cpu.libs import externs


def products(dump: Path, graph: str = "", dtype: str = "f32") -> list[str]:
    """The result shapes of the loop stage's `dtype` tn.mm ops in the dumped graph whose folder name ends with
    `graph` (the only one, by default)."""
    (folder,) = [d for d in dump.iterdir() if d.name.endswith(graph)]
    (loop,) = folder.glob("*-loop.mlir")
    return re.findall(rf"tn\.mm .* -> tensor<(\w+)x{dtype}>", loop.read_text())


def mlp(k: int = 256, n: int = 384) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(k, n), nn.ReLU(), nn.Linear(n, 10))


def train_step(model, x, target):
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return loss.detach(), grads


@pytest.mark.parametrize("rows", [1, 7, 32, 256, 300])
def test_training_step_matches_eager(rows):
    model = mlp()
    x, target = torch.randn(rows, 256), torch.randint(0, 10, (rows,))
    compiled = torch.compile(mlp(), backend=irc.backend, dynamic=False, options={"cache": False})
    for _ in range(2):
        want, got = train_step(model, x, target), train_step(compiled, x, target)
        torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
        for g, w in zip(got[1], want[1]):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_only_the_forward_linear_with_few_rows_turns(tmp_path):
    model = torch.compile(mlp(), backend=irc.backend, options={"cache": False, "dump_dir": str(tmp_path)})
    train_step(model, torch.randn(32, 256), torch.randint(0, 10, (32,)))
    # the 32x256 @ 256x384 product turned (384x32: W @ x^T); the 10-wide head did not
    assert products(tmp_path, "forward") == ["384x32", "32x10"]
    # the backward's products (g @ W, g^T @ x, as AOT autograd writes them) are faster as they are
    assert sorted(products(tmp_path, "backward")) == ["10x384", "32x384", "384x256"]


def test_many_rows_and_transposed_inputs_keep_their_orientation(tmp_path):
    for i, x in enumerate((torch.randn(300, 256), torch.randn(256, 32).t())):
        model = torch.compile(
            mlp(), backend=irc.backend, dynamic=False, options={"cache": False, "dump_dir": str(tmp_path / str(i))}
        )
        train_step(model, x, torch.randint(0, 10, (x.shape[0],)))
        assert products(tmp_path / str(i), "forward")[0] == f"{x.shape[0]}x384"


@pytest.mark.parametrize("onednn_plain", [False, True], ids=["mkl", "onednn"])
def test_inference_turns_only_unfrozen_weights(tmp_path, monkeypatch, onednn_plain):
    """Only MKL's products turn: an unfrozen weight's goes to oneDNN's plain path, unturned, on a machine where
    that outruns MKL (externs.onednn_outruns_mkl, read at compile time as at run time)."""
    monkeypatch.setattr(externs, "onednn_outruns_mkl", lambda: onednn_plain)
    model, x = mlp(1024, 1024).eval(), torch.randn(32, 1024)  # above libs/tuning.py SMALL_FLOPS: oneDNN's when frozen
    with torch.no_grad():
        want = model(x)
        for freeze in (True, False):
            dump = tmp_path / str(freeze)
            got = torch.compile(
                model,
                backend=irc.backend,
                options={"cache": False, "dump_dir": str(dump), "freeze": freeze, "prepack": True},
            )(x)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
            # a frozen weight is oneDNN's, prepacked as the right operand: turning it would lose the packing
            assert products(dump, "inference")[0] == ("32x1024" if freeze or onednn_plain else "1024x32")


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_modes_match_eager(mode):
    model, x, target = mlp(), torch.randn(32, 256), torch.randint(0, 10, (32,))
    compiled = torch.compile(mlp(), backend=irc.backend, options={"cache": False, "mode": mode})
    for _ in range(2):
        want, got = train_step(model, x, target), train_step(compiled, x, target)
        for g, w in zip(got[1], want[1]):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_dynamic_rows_match_eager():
    model = mlp()
    compiled = torch.compile(mlp(), backend=irc.backend, dynamic=True, options={"cache": False})
    for rows in (5, 32, 97):
        x, target = torch.randn(rows, 256), torch.randint(0, 10, (rows,))
        want, got = train_step(model, x, target), train_step(compiled, x, target)
        for g, w in zip(got[1], want[1]):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rows", [16, 64])
def test_a_returned_product_turns_only_with_few_rows(tmp_path, monkeypatch, rows):
    """A product the graph returns is copied back row-major after it turns (one pass over the result), so it turns
    only up to libs/tuning.py TRANSPOSED_RETURNED_ROWS; either way the caller gets eager's numbers and layout."""
    monkeypatch.setattr(externs, "onednn_outruns_mkl", lambda: False)  # MKL's path, the rule's, on any machine
    x, w = torch.randn(rows, 256), torch.randn(384, 256)
    got = torch.compile(
        lambda x, w: x @ w.t(), backend=irc.backend, options={"cache": False, "dump_dir": str(tmp_path)}
    )(x, w)
    assert got.is_contiguous()
    torch.testing.assert_close(got, x @ w.t(), rtol=1e-5, atol=1e-5)
    assert products(tmp_path) == (["384x16"] if rows == 16 else ["64x384"])


@pytest.mark.parametrize("amx", [True, False], ids=["amx", "no-amx"])
@pytest.mark.parametrize("returned", [False, True], ids=["kernel-read", "returned"])
def test_a_bf16_product_with_few_rows_turns_where_torch_runs_it_on_amx(tmp_path, monkeypatch, amx, returned):
    """oneDNN's AMX kernel ran a bf16 x @ W^T of 2 to 128 rows 1.25-2x slower than W @ x^T (docs/cpu-target.md):
    there it turns (externs.amx_bf16_products); elsewhere it keeps its orientation. The machine's facts are set, so
    the verdict is the rule's on any CPU (torch runs a bf16 product without bf16 kernels too, in a reference loop)."""
    monkeypatch.setattr(externs, "narrow_products", lambda: ("bfloat16",))  # not widened to a float32 product
    monkeypatch.setattr(externs, "onednn_outruns_mkl", lambda: False)  # torch.addmm's path, the rule's
    monkeypatch.setattr(externs, "amx_bf16_products", lambda: amx)
    x, w = torch.randn(24, 256).bfloat16(), torch.randn(3000, 256).bfloat16()  # above SMALL_FLOPS
    fn = (lambda x, w: x @ w.t()) if returned else (lambda x, w: torch.relu(x @ w.t()) * 2)
    got = torch.compile(fn, backend=irc.backend, options={"cache": False, "dump_dir": str(tmp_path)})(x, w)
    want = fn(x.double(), w.double())
    assert got.dtype == torch.bfloat16 and got.is_contiguous()
    torch.testing.assert_close(got.double(), want, rtol=1.6e-2, atol=1e-2)
    assert products(tmp_path, dtype="bf16") == (["3000x24"] if amx else ["24x3000"])
