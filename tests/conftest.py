"""Shared fixtures: the irc context, compile helpers with strict mode (irc errors raise instead of falling back)."""

import pytest
import torch

import irc
from irc import env
from irc.dialects import ALL_DIALECTS
from irc.ir import make_context


@pytest.fixture
def ctx():
    return make_context(ALL_DIALECTS)


@pytest.fixture(autouse=True)
def _measurements_kept_whatever_the_load(monkeypatch):
    """The suite loads the machine itself: tests of the disk cache must not depend on the load average
    (cache.quiet(); test_cache_busy.py checks that rule)."""
    from irc import cache

    monkeypatch.setattr(cache, "BUSY_LOAD", float("inf"))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield


# IRC_TEST_TARGET=triton pytest tests/numeric: the numeric tests on another target (tests/triton/test_numeric_suite.py)
TARGET = {"target": env.get("IRC_TEST_TARGET")} if env.get("IRC_TEST_TARGET") else {}


def compile_irc(fn, *, dynamic=None, **options):
    """torch.compile with irc, strict: a compile error in irc fails the test instead of running eagerly."""
    return torch.compile(fn, backend=irc.backend, dynamic=dynamic, options={"strict": True, **TARGET, **options})
