"""The rule base class: a rule reads facts of some kinds and turns each into a `Finding`.

Rules never run the kernel again and never format positions: they say what is wrong, with the
concrete witness the interpreter found, and offer a fix when one edit is unambiguous.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from argus.analyzers.findings import Finding, Fix, Related
from argus.analyzers.interp.facts import Fact
from argus.analyzers.registry import RULES, document


@dataclass
class RuleContext:
    """What a rule may consult beyond the fact: the kernel's name and source bytes."""

    kernel: str
    source: bytes


class Rule:
    """One rule: the fact kinds it `reads`, and its `check` over one fact of those kinds.

    `supersedes` declares precedence: when the kernel has a fact this rule reads, the facts of
    the named kinds, read by the named rule, are not judged (one root cause, one finding)."""

    code: ClassVar[str]
    reads: ClassVar[tuple[str, ...]]
    supersedes: ClassVar[dict[str, tuple[str, ...]]] = {}

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self,
        fact: Fact,
        ctx: RuleContext,
        message: str,
        witness: dict[str, Any] | None,
        fix: Fix | None = None,
        node: ast.AST | None = None,
    ) -> Finding:
        info = RULES[self.code]
        span = fact.smap.span(node if node is not None else fact.node)
        related = tuple(Related(sm.span(n), msg) for n, sm, msg in fact.related)
        return Finding(self.code, info.name, info.severity, ctx.kernel, span, message, witness, fix, related)


REGISTRY: list[Rule] = []


def register(cls: type[Rule]) -> type[Rule]:
    document(cls.code, cls.__doc__)
    REGISTRY.append(cls())
    return cls


def where(d: dict[str, Any]) -> str:
    """`sizes M=37 K=67, pid=(1, 0)` -> the common prefix of every witness summary."""
    parts = []
    if d.get("sizes"):
        parts.append(d["sizes"])
    if d.get("config"):
        parts.append(f"config {d['config']}")
    if d.get("pid") is not None:
        pid = tuple(d["pid"])
        parts.append(f"program_id={pid if len(pid) > 1 else pid[0]}")
    return ", ".join(parts)


def elem(name: str, coords: list[int], symbols: list[str] | None = None) -> str:
    if symbols and len(symbols) == len(coords):
        return f"{name}[{', '.join(f'{s}={c}' if not s.startswith('_') else str(c) for s, c in zip(symbols, coords, strict=True))}]"
    return f"{name}[{', '.join(map(str, coords))}]"


def base_witness(fact: Fact, summary: str, **extra: Any) -> dict[str, Any]:
    w: dict[str, Any] = {"summary": summary}
    for k in ("sizes", "config", "pid", "probe", "assumed"):
        if fact.data.get(k) not in (None, ""):
            w[k] = list(fact.data[k]) if isinstance(fact.data[k], tuple) else fact.data[k]
    w.update(extra)
    return w
