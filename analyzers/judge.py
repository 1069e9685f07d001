"""Stage 5 of the pipeline: the rules judge one kernel's facts.

Precedence comes from the rules (`Rule.supersedes`), dispatch from what each rule reads; a
finding is kept once per (code, place).
"""

from __future__ import annotations

import ast

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Fact
from argus.analyzers.rules import REGISTRY, Rule, RuleContext


def _by_kind() -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for rule in REGISTRY:
        for kind in rule.reads:
            out.setdefault(kind, []).append(rule)
    return out


def _superseded(facts: list[Fact]) -> set[str]:
    """Fact kinds that a rule with a fact of its own takes precedence over."""
    present = {f.kind for f in facts}
    out: set[str] = set()
    for rule in REGISTRY:
        if present.intersection(rule.reads):
            for kinds in rule.supersedes.values():
                out.update(kinds)
    return out


def judge(facts: list[Fact], func: ast.FunctionDef, ctx: RuleContext) -> list[Finding]:
    dropped = _superseded(facts)
    by_kind = _by_kind()
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for fact in facts:
        if fact.kind in dropped:
            continue
        fact.data.setdefault("_func", func)
        for rule in by_kind.get(fact.kind, []):
            for f in rule.check(fact, ctx):
                key = (f.code, f.span.start_byte)
                if key not in seen:
                    seen.add(key)
                    findings.append(f)
    return findings


def check_precedence_declarations() -> list[str]:
    """Declarations that name an unknown rule or a kind that rule does not read (for the tests)."""
    by_code = {r.code: r for r in REGISTRY}
    problems = []
    for rule in REGISTRY:
        for code, kinds in rule.supersedes.items():
            target = by_code.get(code)
            if target is None:
                problems.append(f"{rule.code} supersedes unknown rule {code}")
                continue
            problems += [
                f"{rule.code} supersedes {code}:{k}, which {code} does not read"
                for k in kinds
                if k not in target.reads
            ]
    return problems
