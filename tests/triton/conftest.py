"""The Triton target's tests run under Triton's interpreter when there is no GPU: TRITON_INTERPRET must be
set before Triton is first imported (its standard library is jitted at import time)."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
