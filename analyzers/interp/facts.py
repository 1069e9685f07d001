"""Facts: what the interpreter observed that breaks an invariant, with the concrete instance.

The interpreter never decides wording or severity; it records a `Fact` (its kind, the source node,
the probe, program id and the lanes involved) and the rule modules turn facts into findings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.model.kernel import SourceMap


@dataclass
class Fact:
    kind: str  # e.g. "oob-load", "dot-mismatch" (each rule module lists the kinds it reads)
    node: ast.AST
    smap: SourceMap
    data: dict[str, Any] = field(default_factory=dict)
    related: list[tuple[ast.AST, SourceMap, str]] = field(default_factory=list)
    global_: bool = False  # judged over all programs (coverage, races): dropped if a run aborts

    @property
    def key(self) -> tuple[str, int]:
        return (self.kind, self.smap.span(self.node).start_byte)


class FactSink:
    """Collects facts of one kernel across probes, keeping the first instance per (kind, place)."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, int], Fact] = {}
        self.seen: set[Any] = set()  # dedupe keys for facts reported once per cause

    def first_time(self, key: Any) -> bool:
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def add(self, fact: Fact) -> None:
        self.facts.setdefault(fact.key, fact)

    def has(self, kind: str) -> bool:
        return any(k[0] == kind for k in self.facts)

    def of(self, *kinds: str) -> list[Fact]:
        return [f for f in self.facts.values() if f.kind in kinds]
