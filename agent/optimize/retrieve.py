"""Retrieve: the knowledge cards that fit the findings, the bottleneck and the kernel's pattern."""

from __future__ import annotations

from argus.agent.optimize.diagnose import Diagnosis
from argus.knowledge.retrieve import Hit, recommend

BOUND_TO_CARD = {"compute-bound": "compute", "memory-bound": "memory", "latency-bound": "latency"}


def cards_for(diagnosis: Diagnosis, limit: int = 6) -> list[Hit]:
    """Ranked cards: rule codes of the findings, the roofline class, the pattern (see knowledge.retrieve)."""
    bottleneck = BOUND_TO_CARD.get(diagnosis.bound or "")
    return recommend(diagnosis.findings, bottleneck=bottleneck, pattern=diagnosis.pattern, target="sm90", limit=limit)
