"""irc-fuzz: property-based fuzzing of the whole compiler with Hypothesis (see tools/fuzz/cli.py)."""
