"""Policies propose candidates; `make_policy` picks one by name ("knowledge" or "llm")."""

from __future__ import annotations

from argus.agent.optimize.policies.base import Policy, PolicyContext
from argus.agent.optimize.types import OptimizeError, OptimizeRequest


def make_policy(request: OptimizeRequest) -> Policy:
    if request.policy == "knowledge":
        from argus.agent.optimize.policies.knowledge import KnowledgePolicy

        return KnowledgePolicy()
    if request.policy == "llm":
        from argus.agent.optimize.policies.llm import LLMPolicy

        return LLMPolicy(request.llm)
    raise OptimizeError(f"unknown policy {request.policy!r}: use knowledge or llm")


__all__ = ["Policy", "PolicyContext", "make_policy"]
