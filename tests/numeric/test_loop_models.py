"""The demo models give eager's results at the loop stage (after each pass) and at the mem stage; their kernel counts."""

import pytest
import torch

from irc.bench import models

from .stages import as_function, run_stages


def _run(model, inputs):
    model.eval()
    fn, state = as_function(model)
    with torch.no_grad():
        return run_stages(fn, *state, *inputs)


def test_mlp():
    model, inputs = models.mlp(batch=3)
    run = _run(model, inputs)
    assert run.kernels == 3  # each Linear's bias (+ ReLU) is one nest after its matmul
    assert run.externs == 3


def test_convnet():
    model, inputs = models.convnet(batch=2)
    run = _run(model, inputs)
    assert run.kernels <= 3  # each conv's BatchNorm + ReLU, the head's bias


@pytest.mark.parametrize("mask", [False, True])
def test_mini_transformer(mask):
    model, inputs = models.mini_transformer(batch=2, seq=7, mask=mask)
    run = _run(model, inputs)
    # per block: qkv bias (+ the permutes), masked softmax, head merge, bias + residual + LayerNorm twice, bias + GELU
    assert run.kernels <= 5 * len(model.blocks) + 2
