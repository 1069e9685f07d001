"""Rule modules, one per rule or close group of rules. Importing this package imports every
module in it (in name order), and each rule registers itself and attaches its documentation to
the catalogue: a new rule is its own module plus its line in `analyzers/registry.py`."""

import importlib
import pkgutil

from argus.analyzers.rules.base import REGISTRY, Rule, RuleContext

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "Rule", "RuleContext"]
