"""Hypothesis settings for the fuzzer: the bounded CI profile (tests/fuzz) and the CLI's open-ended runs."""

from hypothesis import HealthCheck, Phase, settings

from irc import env

SUPPRESS = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]

# tests/fuzz: a fixed sample (derandomize) with no database, sized to a few minutes on two shared cores.
settings.register_profile(
    "irc-fuzz-ci",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=25,
    suppress_health_check=SUPPRESS,
    print_blob=False,
)
# IRC_FUZZ_PROFILE=irc-fuzz-long pytest tests/fuzz: more examples, random each run.
settings.register_profile(
    "irc-fuzz-long", deadline=None, max_examples=500, suppress_health_check=SUPPRESS, database=None
)


def profile(name: str | None = None, **overrides) -> settings:
    """The named profile (IRC_FUZZ_PROFILE, else irc-fuzz-ci) with overrides."""
    return settings(settings.get_profile(name or env.get("IRC_FUZZ_PROFILE")), **overrides)


NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
