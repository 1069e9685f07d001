"""The rule base class: a rule reads typed events of some kinds and turns each into a `Finding`.

Rules never run the kernel again and never format positions: they say what is wrong, with the
concrete witness the interpreter found (read from the event's typed fields and its
`ProbeContext`), and offer a fix when one edit is unambiguous.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from argus.analyzers.findings import Finding, Fix
from argus.analyzers.findings import Related as RelatedSpan
from argus.analyzers.interp.facts import CONTEXT_KEYS, Fact, ProbeContext, Related
from argus.analyzers.registry import RULES, document


@dataclass(frozen=True)
class RuleContext:
    """What a rule may consult beyond the event: the kernel's name, source bytes and parsed
    function (set by the judge; a quick fix looks at the kernel's other memory ops)."""

    kernel: str
    source: bytes
    func: ast.FunctionDef | None = None


E = TypeVar("E", bound=Fact)


class Rule(Generic[E]):
    """One rule: the event kinds it `reads`, and its `check` over one event of those kinds
    (`E`, the event class those kinds are declared with in `interp/facts.py`).

    `supersedes` declares precedence: when the kernel has an event this rule reads, the events
    of the named kinds, read by the named rule, are not judged (one root cause, one finding)."""

    code: ClassVar[str]
    reads: ClassVar[tuple[str, ...]]
    supersedes: ClassVar[dict[str, tuple[str, ...]]] = {}

    def check(self, fact: E, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self,
        fact: Fact,
        ctx: RuleContext,
        message: str,
        witness: dict[str, Any] | None,
        fix: Fix | None = None,
        node: ast.AST | None = None,
        also_related: tuple[Related, ...] = (),
    ) -> Finding:
        info = RULES[self.code]
        span = fact.smap.span(node if node is not None else fact.node)
        related = tuple(RelatedSpan(sm.span(n), msg) for n, sm, msg in (*fact.related, *also_related))
        return Finding(self.code, info.name, info.severity, ctx.kernel, span, message, witness, fix, related)


REGISTRY: list[Rule[Any]] = []

R = TypeVar("R", bound=type[Rule[Any]])


def register(cls: R) -> R:
    document(cls.code, cls.__doc__)
    REGISTRY.append(cls())
    return cls


def where(probe: ProbeContext) -> str:
    """`sizes M=37 K=67, pid=(1, 0)` -> the common prefix of every witness summary."""
    parts = []
    if probe.sizes:
        parts.append(probe.sizes)
    if probe.config:
        parts.append(f"config {probe.config}")
    if probe.pid is not None:
        pid = probe.pid
        parts.append(f"program_id={pid if len(pid) > 1 else pid[0]}")
    return ", ".join(parts)


def elem(name: str, coords: list[int], symbols: list[str] | None = None) -> str:
    if symbols and len(symbols) == len(coords):
        return f"{name}[{', '.join(f'{s}={c}' if not s.startswith('_') else str(c) for s, c in zip(symbols, coords, strict=True))}]"
    return f"{name}[{', '.join(map(str, coords))}]"


def base_witness(fact: Fact, summary: str, **extra: Any) -> dict[str, Any]:
    """The witness every finding starts from: the summary and the probe context it was seen in."""
    w: dict[str, Any] = {"summary": summary}
    for k in CONTEXT_KEYS:
        value = getattr(fact.probe, k)
        if value not in (None, ""):
            w[k] = list(value) if isinstance(value, tuple) else value
    w.update(extra)
    return w
