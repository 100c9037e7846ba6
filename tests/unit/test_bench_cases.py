"""bench/cases.py's training cases (issue 15, point 6): which exist, how they skip, and that a step is a step."""

import torch

from irc.bench import hf_models
from irc.bench.cases import CASES, TRAIN
from irc.bench.compare import build, grad_mode
from irc.bench.models import DEMOS
from irc.bench.report import markdown


def test_every_trainable_demo_and_hf_model_has_a_train_case():
    names = {c.name for c in TRAIN}
    want = {f"train-{d.name.removesuffix('-train')}" for d in DEMOS if d.train and not d.name.startswith("hf-")}
    assert want | {"train-hf-bert", "train-hf-gpt2", "adamw-step"} == names
    assert {"train-mlp-b32", "train-mlp-b1024", "train-convnet", "train-mini-transformer"} <= names
    assert all(CASES[n] is c for c in TRAIN for n in [c.name])


def test_hf_cases_skip_with_the_reason_exactly_when_transformers_is_missing():
    for name in ("train-hf-bert", "train-hf-gpt2"):
        why = CASES[name].skip()
        assert (why is None) == hf_models.available()
        assert why is None or "transformers is not installed" in why
    assert all(CASES[c.name].skip() is None for c in TRAIN if not c.name.startswith("train-hf-"))


def test_a_skipped_case_is_a_row_of_the_report():
    row = {"skipped": "transformers is not installed"}
    meta = {"torch": "x", "threads": 2, "cpus": 2, "copy_gbps": 1.0, "load_before": (0.0,), "started": "now"}
    assert "| train-hf-bert | skipped: transformers is not installed |" in markdown({"train-hf-bert": row}, meta)


def test_a_train_step_runs_forward_backward_and_the_optimizer():
    """The eager step of the MLP: a scalar loss with autograd on, and every parameter moved by SGD."""
    case = CASES["train-mlp-b32"]
    with grad_mode(case):
        step, inputs = build(case, "eager")
        before = [p.detach().clone() for p in step.model.parameters()]
        loss = step(*inputs)
    assert inputs == () and loss.dim() == 0 and torch.isfinite(loss)
    assert all(not torch.equal(a, b) for a, b in zip(before, step.model.parameters()))
