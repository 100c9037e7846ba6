"""tests/fuzz: the fuzzer's properties on a bounded, derandomized sample (profile irc-fuzz-ci), and its regressions.

IRC_FUZZ_PROFILE=irc-fuzz-long runs more (and random) examples; `irc-fuzz --budget SECONDS` runs open-ended.
"""

import logging
import warnings

import pytest

import irc.tools.fuzz.profiles  # noqa: F401  (registers the profiles)


@pytest.fixture(autouse=True)
def _quiet():
    """torch's and irc's warnings about generated programs (degrees of freedom, fallbacks) are expected noise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        level = logging.getLogger("irc").level
        logging.getLogger("irc").setLevel(logging.ERROR)
        yield
        logging.getLogger("irc").setLevel(level)


def targets() -> list[str]:
    """Every target irc has (a target that fails to import fails the tests that use it)."""
    from irc import options

    return list(options.TARGETS)
