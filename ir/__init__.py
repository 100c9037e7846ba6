"""The thin layer over xDSL that knows no irc op: context, text, rules, pass runner, dtype mapping."""

from .context import make_context
from .passes import PassTiming, run_passes
from .rules import Rule, apply_rules, rule
from .text import parse_module, print_module

__all__ = ["make_context", "parse_module", "print_module", "Rule", "rule", "apply_rules", "run_passes", "PassTiming"]
