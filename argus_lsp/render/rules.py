"""The rule catalogue as people read it: the `argus rules` table and each rule's page.

Rule modules attach their documentation when they are imported, so everything that shows rule
docs first imports every module of `analyzers.rules`; the pages then come from that one source.
"""

from __future__ import annotations

import importlib
import pkgutil

from argus.analyzers import RULES, RuleInfo


def load_rule_docs() -> None:
    """Import every rule module so each has documented itself in RULES."""
    package = importlib.import_module("argus.analyzers.rules")
    for module in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)


def rule_table() -> str:
    """One line per code: code, default severity, name, and the invariant it checks."""
    width = max(len(info.name) for info in RULES.values())
    lines = [f"{'code':<6} {'severity':<8} {'name':<{width}} invariant"]
    for code, info in RULES.items():
        lines.append(f"{code:<6} {info.severity.value:<8} {info.name:<{width}} {info.summary}")
    return "\n".join(lines) + "\n"


def find_rule(code: str) -> RuleInfo | None:
    """A rule by code (any case) or by name (`stale-reduction-pointer`)."""
    key = code.strip()
    info = RULES.get(key.upper())
    if info is not None:
        return info
    return next((i for i in RULES.values() if i.name == key.lower()), None)
