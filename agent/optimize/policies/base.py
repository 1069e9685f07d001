"""The interface both policies implement: given the context and the history, propose candidates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from argus.agent.optimize.diagnose import Diagnosis
from argus.agent.optimize.history import History
from argus.agent.optimize.types import Candidate
from argus.knowledge.retrieve import Hit


@dataclass
class PolicyContext:
    """What a policy knows about the kernel: source, names, diagnosis, cards, and the profile."""

    source: str
    path: str
    kernel: str
    launcher: str
    diagnosis: Diagnosis
    cards: list[Hit] = field(default_factory=list)
    on_gpu: bool = False
    profile: dict = field(default_factory=dict)
    seed: int = 0


class Policy(Protocol):
    name: str

    def propose(self, ctx: PolicyContext, history: History, n: int) -> list[Candidate]:
        """Up to `n` new candidates (an empty list: the policy has nothing more to propose)."""
        ...

    def usage(self) -> dict:
        """Tokens, cost and calls for the report (empty for offline policies)."""
        ...
