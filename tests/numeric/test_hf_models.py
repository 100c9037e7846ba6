"""Hugging Face transformers models (bench/hf_models.py: BERT with an attention mask, GPT-2), tiny configs
with random weights built from config objects (no download), compiled with irc (strict): inference and a
training step against eager, with no eager fallback in any graph. Skipped without the optional extra
`transformers` (`pip install -e .[hf]`)."""

import pytest
import torch

pytest.importorskip("transformers", reason="transformers not installed (optional extra: pip install -e .[hf])")

from irc import report  # noqa: E402
from irc.bench import hf_models as HF  # noqa: E402
from irc.bench.check import FORWARD_TOL, assert_close, compare_steps, loss_fn, targets_for, train_step, twin  # noqa: E402
from tests.conftest import compile_irc  # noqa: E402

TINY = {"vocab": 100, "hidden": 32, "layers": 2, "heads": 4, "ff": 64, "max_len": 32}
MODELS = {"bert": lambda: HF.bert(batch=2, seq=16, **TINY), "gpt2": lambda: HF.gpt2(batch=2, seq=16, **TINY)}


def _native(rep: report.CompileReport) -> None:
    assert rep.graphs and [g.eager_graph for g in rep.graphs if g.eager_graph] == [], str(rep)
    assert sorted({f[0] for f in rep.fallbacks}) == [], str(rep)


@pytest.mark.parametrize("name", MODELS)
def test_inference_matches_eager_without_fallback(name):
    model, inputs = MODELS[name]()
    model.eval()
    mine = twin(model)
    mark = report.mark()
    with torch.no_grad():
        want = model(*inputs)
        got = compile_irc(mine)(*inputs)
    assert got.shape == (2, 10 if name == "bert" else 100)
    assert_close("logits", got, want, FORWARD_TOL)
    _native(report.reports_since(mark))


@pytest.mark.parametrize("name", MODELS)
def test_training_step_matches_eager_without_fallback(name):
    model, inputs = MODELS[name]()
    mine = twin(model)
    with torch.no_grad():
        target = targets_for(twin(model).eval()(*inputs))
    mark = report.mark()
    got = train_step(mine, inputs, compile_irc(loss_fn(mine)), target, optimizer="sgd")
    rep = report.reports_since(mark)
    want = train_step(model, inputs, loss_fn(model), target, optimizer="sgd")
    assert set(got.grads) == set(want.grads) and len(want.grads) > 20
    compare_steps(got, want)
    _native(rep)
