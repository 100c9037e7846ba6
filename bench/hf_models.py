"""Hugging Face transformers models for the demo, the benchmarks and the tests: BERT and GPT-2 built from
their config objects with random weights (seeded), so nothing is downloaded, ever.

transformers is an optional extra (`pip install -e .[hf]`); without it `demos()` is empty and the
tests that need it skip. Each factory returns `(model, inputs)` like bench/models.py's, the model
returning one logits tensor (batch, classes) so the training harness (bench/check.py) applies:

    bert(batch, seq, **config)   BertForSequenceClassification, 10 labels, with an attention mask
                                 that pads the second half of every other sequence
    gpt2(batch, seq, **config)   GPT2LMHeadModel, the next-token logits at the last position

Defaults are the benchmark sizes (hidden 256, 4 layers, 4 heads, feed-forward 1024, ids (16, 128),
next to MiniTransformer's); the tests pass tiny configs. Dropout is off so eager and compiled agree.
"""

import importlib.util

import torch
from torch import nn

BENCH = {"vocab": 30522, "hidden": 256, "layers": 4, "heads": 4, "ff": 1024, "max_len": 512}


def available() -> bool:
    return importlib.util.find_spec("transformers") is not None


class Logits(nn.Module):
    """A transformers model returning one tensor: its `.logits`, at the last position for a language model."""

    def __init__(self, model: nn.Module, last: bool = False):
        super().__init__()
        self.model, self.last = model, last

    def forward(self, ids, attention_mask=None):
        if self.last:  # the LM head on the last position only (not (batch, seq, vocab) logits)
            hidden = self.model.base_model(input_ids=ids, attention_mask=attention_mask).last_hidden_state
            return self.model.get_output_embeddings()(hidden[:, -1])
        return self.model(input_ids=ids, attention_mask=attention_mask).logits


def _ids(batch: int, seq: int, vocab: int) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, seq))


def bert(batch: int = 16, seq: int = 128, seed: int = 0, **config):
    from transformers import BertConfig, BertForSequenceClassification

    c = {**BENCH, **config}
    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=c["vocab"],
        hidden_size=c["hidden"],
        num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"],
        intermediate_size=c["ff"],
        max_position_embeddings=c["max_len"],
        num_labels=10,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = Logits(BertForSequenceClassification(cfg))
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1::2, seq // 2 :] = 0
    return model, (_ids(batch, seq, c["vocab"]), mask)


def gpt2(batch: int = 16, seq: int = 128, seed: int = 0, **config):
    from transformers import GPT2Config, GPT2LMHeadModel

    c = {**BENCH, "vocab": 50257, **config}
    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=c["vocab"],
        n_embd=c["hidden"],
        n_layer=c["layers"],
        n_head=c["heads"],
        n_inner=c["ff"],
        n_positions=c["max_len"],
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return Logits(GPT2LMHeadModel(cfg), last=True), (_ids(batch, seq, c["vocab"]),)


def make_bert():
    """inputs: 16x128xi64 16x128xi64"""
    return bert()[0].eval()


def make_gpt2():
    """inputs: 16x128xi64"""
    return gpt2()[0].eval()


def demos() -> tuple:
    """The demo entries (bench/models.Demo) of these models; none without transformers."""
    if not available():
        return ()
    from .models import Demo

    return (
        Demo("hf-bert", bert, train=True, description="transformers BERT (random weights) h256 L4, ids (16,128), mask"),
        Demo("hf-gpt2", gpt2, train=True, description="transformers GPT-2 (random weights) h256 L4, ids (16,128)"),
    )
