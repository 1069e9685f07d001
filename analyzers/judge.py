"""Stage 5 of the pipeline: the rules judge one kernel's events.

Precedence comes from the rules (`Rule.supersedes`), dispatch from the event kinds each rule
reads; a finding is kept once per (code, place). The events are frozen: what a rule needs
beyond one event (the kernel's function, for a quick fix) comes in the `RuleContext`.
"""

from __future__ import annotations

import ast
import typing
from dataclasses import replace
from typing import Any

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import EVENTS, Fact
from argus.analyzers.rules import REGISTRY, Rule, RuleContext


def _by_kind() -> dict[str, list[Rule[Any]]]:
    out: dict[str, list[Rule[Any]]] = {}
    for rule in REGISTRY:
        for kind in rule.reads:
            out.setdefault(kind, []).append(rule)
    return out


def _superseded(facts: list[Fact]) -> set[str]:
    """Event kinds that a rule with an event of its own takes precedence over."""
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
    ctx = replace(ctx, func=func)
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for fact in facts:
        if fact.kind in dropped:
            continue
        for rule in by_kind.get(fact.kind, []):
            for f in rule.check(fact, ctx):
                key = (f.code, f.span.start_byte)
                if key not in seen:
                    seen.add(key)
                    findings.append(_on_picked_values(f, fact))
    return findings


def _on_picked_values(finding: Finding, fact: Fact) -> Finding:
    """A finding seen under a probe that picked values the code does not establish (a grid
    axis of a device property, a constexpr an unreadable autotune list supplies) may hold only
    for that pick: it is a hint naming the pick, never an error or warning (issue 12, rule 1)."""
    choice = fact.probe.choice
    if not choice or not finding.severity.fails_check:
        return finding
    return replace(
        finding,
        severity=Severity.HINT,
        message=f"{finding.message}; reported as a hint: it rests on values the code does not establish ({choice})",
    )


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


def _accepted_events(rule: Rule[Any]) -> tuple[type, ...]:
    """The event classes a rule's `check` is declared over (`class X(Rule[A | B])`)."""
    for base in getattr(type(rule), "__orig_bases__", ()):
        if typing.get_origin(base) is Rule:
            (arg,) = typing.get_args(base)
            return typing.get_args(arg) or (arg,)
    return ()


def check_read_declarations() -> list[str]:
    """Rules that read a kind no event class declares, or whose `check` is not declared over the
    class of a kind it reads (for the tests)."""
    problems = []
    for rule in REGISTRY:
        accepted = _accepted_events(rule)
        if not accepted:
            problems.append(f"{rule.code} does not name the events it checks (class ...(Rule[Event]))")
        for kind in rule.reads:
            cls = EVENTS.get(kind)
            if cls is None:
                problems.append(f"{rule.code} reads {kind!r}, which no event class declares")
            elif accepted and not issubclass(cls, accepted):
                problems.append(f"{rule.code} reads {kind!r} ({cls.__name__}) but checks {accepted}")
    return problems
