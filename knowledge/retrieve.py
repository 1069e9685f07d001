"""Finding the cards that answer a question: by text (BM25), by rule code, bottleneck or pattern, or all
of these at once for the agent (findings + roofline class + kernel pattern -> ranked cards).

BM25 over title + codes + body is enough for a library of tens of cards: no embeddings, no model, the
same answer on every machine, and cheap enough to run on every agent step.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from argus.knowledge.cards import Card, load_cards

_TOKEN = re.compile(r"[a-z0-9_]+")
_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "with", "which", "when"])


def tokenize(text: str) -> list[str]:
    """Lower-case words and identifiers; `num_stages`, `PF002` and `exp2` stay whole."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


@dataclass(frozen=True)
class Hit:
    """A card and why it ranked: its score and the signals that matched."""

    card: Card
    score: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"id": self.card.id, "title": self.card.title, "score": round(self.score, 4), "reasons": list(self.reasons)}


class Index:
    """BM25 (k1=1.5, b=0.75) over each card's title (counted three times), codes, patterns and body."""

    def __init__(self, cards: Iterable[Card], k1: float = 1.5, b: float = 0.75) -> None:
        self.cards = list(cards)
        self.k1, self.b = k1, b
        self.docs = [Counter(tokenize(self._text(c))) for c in self.cards]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg_len = sum(self.lengths) / max(len(self.lengths), 1)
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    @staticmethod
    def _text(card: Card) -> str:
        return " ".join([card.title] * 3 + [card.id.replace("-", " "), " ".join(card.codes), " ".join(card.patterns), card.body])

    def scores(self, query: str) -> list[float]:
        terms = tokenize(query)
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            s = 0.0
            for t in terms:
                f = doc.get(t, 0)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / self.avg_len))
            out.append(s)
        return out


def search(query: str, limit: int = 5, cards: list[Card] | None = None) -> list[Hit]:
    """Cards ranked by BM25 relevance to free text; cards that match no term are left out."""
    cards = load_cards() if cards is None else cards
    index = Index(cards)
    ranked = sorted(zip(index.scores(query), cards, strict=True), key=lambda x: -x[0])
    return [Hit(c, s, ("text",)) for s, c in ranked if s > 0][:limit]


def by_code(code: str, cards: list[Card] | None = None) -> list[Card]:
    """Cards that answer a rule code (e.g. PF002), in library order."""
    code = code.upper()
    return [c for c in (load_cards() if cards is None else cards) if code in c.codes]


def by_bottleneck(bottleneck: str, cards: list[Card] | None = None) -> list[Card]:
    """Cards for a roofline class: memory, compute or latency."""
    return [c for c in (load_cards() if cards is None else cards) if bottleneck.lower() in c.bottlenecks]


def by_pattern(pattern: str, cards: list[Card] | None = None) -> list[Card]:
    """Cards for a kernel pattern: gemm, attention, moe, reduction or elementwise."""
    return [c for c in (load_cards() if cards is None else cards) if pattern.lower() in c.patterns]


def _codes_of(findings: Iterable[object]) -> list[str]:
    """Rule codes from analyzer Finding objects, dicts with a 'code', or plain strings."""
    out = []
    for f in findings:
        code = f if isinstance(f, str) else f.get("code") if isinstance(f, dict) else getattr(f, "code", None)
        if code:
            out.append(str(code).upper())
    return out


def recommend(
    findings: Iterable[object] = (),
    bottleneck: str | None = None,
    pattern: str | None = None,
    text: str = "",
    target: str | None = None,
    limit: int = 5,
    cards: list[Card] | None = None,
) -> list[Hit]:
    """The agent's query: rank cards by the findings' codes (3 points each), the bottleneck (2), the
    pattern (1.5), the target (0.5) and BM25 on `text` plus the findings' messages (scaled to at most 2).
    Cards that match nothing are dropped; ties keep library order."""
    cards = load_cards() if cards is None else cards
    findings = list(findings)
    codes = _codes_of(findings)
    messages = " ".join(str(getattr(f, "message", "") or (f.get("message", "") if isinstance(f, dict) else "")) for f in findings)
    query = " ".join([text, messages]).strip()
    text_scores = Index(cards).scores(query) if query else [0.0] * len(cards)
    top = max(text_scores) if text_scores and max(text_scores) > 0 else 1.0
    hits = []
    for card, ts in zip(cards, text_scores, strict=True):
        score, reasons = 0.0, []
        matched = [c for c in dict.fromkeys(codes) if c in card.codes]
        if matched:
            score += 3.0 * len(matched)
            reasons.append("codes " + ",".join(matched))
        if bottleneck and bottleneck.lower() in card.bottlenecks:
            score += 2.0
            reasons.append(f"bottleneck {bottleneck.lower()}")
        if pattern and pattern.lower() in card.patterns:
            score += 1.5
            reasons.append(f"pattern {pattern.lower()}")
        if target and target.lower() in card.targets:
            score += 0.5
            reasons.append(f"target {target.lower()}")
        if ts > 0:
            score += 2.0 * ts / top
            reasons.append("text")
        if score > 0:
            hits.append(Hit(card, score, tuple(reasons)))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]

