"""The offline policy: the documented rewrites of agent/optimize/rewrites, ordered by the retrieved cards.

Round 1 proposes each applicable rewrite's variants: the library's expert kernel first (when the pattern
has one), then the other rewrites in the order their cards ranked for this kernel. Round 2 searches the
configs of the best candidate so far: the other rewrites stacked on top of it (e.g. warps and stages on
the best tile). Deterministic: the same file, cards and history give the same proposals in the same order.
"""

from __future__ import annotations

from argus.agent.optimize.history import History
from argus.agent.optimize.policies.base import PolicyContext
from argus.agent.optimize.rewrites import REWRITES, Proposal, RewriteContext, proposals
from argus.agent.optimize.rewrites import expert as expert_rewrite
from argus.agent.optimize.types import Candidate


class KnowledgePolicy:
    name = "knowledge"

    def __init__(self) -> None:
        self.queue: list[tuple[Proposal, str | None]] | None = None
        self.stacked_on: set[str] = set()
        self.count = 0

    def usage(self) -> dict:
        return {}

    def _order(self, ctx: PolicyContext) -> tuple[str, ...]:
        rank = {hit.card.id: i for i, hit in enumerate(ctx.cards)}
        names = [m.__name__.rsplit(".", 1)[-1] for m in REWRITES]
        cards = {m.__name__.rsplit(".", 1)[-1]: m.CARD for m in REWRITES}
        rest = sorted((n for n in names if n != "expert"), key=lambda n: (rank.get(cards[n], len(rank)), names.index(n)))
        return ("expert", *rest)

    def _context(self, ctx: PolicyContext, source: str) -> RewriteContext:
        return RewriteContext(source, ctx.kernel, ctx.launcher, ctx.diagnosis.pattern, ctx.on_gpu)

    def _round_one(self, ctx: PolicyContext) -> list[tuple[Proposal, str | None]]:
        out = []
        rctx = self._context(ctx, ctx.source)
        for name in self._order(ctx):
            out.extend((p, None) for p in proposals(rctx, (name,)))
        return out

    def _round_two(self, ctx: PolicyContext, history: History) -> list[tuple[Proposal, str | None]]:
        best = history.best()
        if best is None or best.candidate.id in self.stacked_on or best.candidate.origin == "knowledge:expert":
            return []
        self.stacked_on.add(best.candidate.id)
        used = best.candidate.origin.split(":", 1)[-1].split("+")
        others = tuple(n for n in self._order(ctx) if n not in used and n != "expert")
        return [(p, best.candidate.id) for p in proposals(self._context(ctx, best.candidate.source), others)]

    def propose(self, ctx: PolicyContext, history: History, n: int) -> list[Candidate]:
        if self.queue is None:
            self.queue = self._round_one(ctx)
        out: list[Candidate] = []
        while len(out) < n:
            if not self.queue:
                self.queue = self._round_two(ctx, history)
                if not self.queue:
                    break
            proposal, parent = self.queue.pop(0)
            if history.seen(proposal.source) or any(c.source == proposal.source for c in out):
                continue
            self.count += 1
            parent_origin = next((a.candidate.origin for a in history.attempts if a.candidate.id == parent), None)
            origin = f"{parent_origin}+{proposal.rewrite}" if parent_origin else f"knowledge:{proposal.rewrite}"
            cards = list(expert_rewrite.cards_for(ctx.diagnosis.pattern)) if proposal.rewrite == "expert" else [proposal.card]
            out.append(Candidate(
                id=f"k{self.count:02d}", source=proposal.source, origin=origin, cards=cards,
                description=proposal.label, parent=parent, uses=list(proposal.uses),
            ))
        return out
