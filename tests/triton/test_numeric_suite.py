"""The whole numeric suite of per-op translations (tests/numeric: core ops, nn ops, nn models) on the Triton
target, under the interpreter without a GPU: the same tests, with tests/conftest.compile_irc compiling for
options={"target": "triton"} (IRC_TEST_TARGET). Slow (minutes on two cores), so outside the CI run;
tests/triton/test_codegen.py holds the quick sample."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ["tests/numeric/test_core_ops.py", "tests/numeric/test_nn_ops.py", "tests/numeric/test_nn_models.py"]


@pytest.mark.slow
def test_numeric_suite_on_triton():
    env = {**os.environ, "IRC_TEST_TARGET": "triton"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:logging", "-x", *SUITE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
