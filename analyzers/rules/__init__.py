"""Rule modules, one per rule or close group of rules, in RULES.md order. Importing this package
registers every rule (and attaches its documentation to the catalogue)."""

from analyzers.rules import (  # noqa: F401
    ar_unsupported,
    df_assert,
    df_dot,
    df_reduction,
    df_store,
    gr_autotune,
    gr_coverage,
    gr_race,
    mb_bounds,
    mb_loaded_index,
    mb_masking,
    mb_overflow,
    nu_accumulator,
    nu_softmax,
)
from analyzers.rules.base import REGISTRY, Rule, RuleContext

__all__ = ["REGISTRY", "Rule", "RuleContext"]
