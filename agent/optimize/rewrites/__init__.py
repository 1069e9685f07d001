"""The knowledge policy's source rewrites: each one the mechanism of one knowledge card.

A rewrite is a module here with CARD (the card id), DESCRIPTION, `applies(ctx)` and `variants(ctx)`,
which yields (label, new_source, uses) for each parameter setting it proposes. `ctx` is a RewriteContext.
Rewrites edit the user's own file (kernel and launcher), never execute it, and return None when the
file does not have the shape they transform. docs/optimize.md lists them; each has its own test.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

from argus.agent.optimize.rewrites import (
    causal_skip,
    exp2,
    expert,
    launch_tuning,
    pid_swizzle,
    retile,
    split_k,
)


@dataclass(frozen=True)
class RewriteContext:
    source: str
    kernel: str
    launcher: str
    pattern: str
    on_gpu: bool


@dataclass(frozen=True)
class Proposal:
    rewrite: str
    card: str
    label: str
    source: str
    uses: tuple[str, ...] = ()


REWRITES: tuple[ModuleType, ...] = (expert, causal_skip, retile, pid_swizzle, split_k, launch_tuning, exp2)


def proposals(ctx: RewriteContext, names: tuple[str, ...] | None = None) -> Iterator[Proposal]:
    """Every proposal of every rewrite that applies, in REWRITES order (deterministic)."""
    for mod in REWRITES:
        name = mod.__name__.rsplit(".", 1)[-1]
        if names is not None and name not in names:
            continue
        if not mod.applies(ctx):
            continue
        for label, source, uses in mod.variants(ctx):
            if source is not None and source != ctx.source:
                yield Proposal(name, mod.CARD, label, source, tuple(uses))
