"""The agent's data model: the request, one candidate, its gate verdicts, and the result.

Plain dataclasses that serialize to JSON (`to_json`), so the CLI, the language server and the
MCP tools read the same shape. Nothing here runs code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

GATES = ("invariants", "correctness", "performance")


class OptimizeError(ValueError):
    """A request that cannot run: bad flags, a missing task, an unreachable endpoint (exit 2)."""


@dataclass
class LLMSettings:
    """Where the `llm` policy sends its prompts. The key itself is never stored here, only its variable."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = 4
    price_per_mtok: float | None = None  # USD per million tokens, for the cost line of the report


@dataclass
class OptimizeRequest:
    """What to optimize and within which budget; see docs/optimize.md for every field."""

    target: str  # "FILE::KERNEL"
    task: str | None = None  # a sidecar path when it is not FILE.argus.toml
    policy: str = "knowledge"  # "knowledge" or "llm"
    budget: int = 12  # candidates proposed at most
    minutes: float = 30.0  # wall-clock budget
    runner: str = "local"  # "local" or "ssh://HOST" (profiling's targets)
    ray_address: str | None = None
    backend: str = "auto"  # "auto", "cuda" or "cpu" (the Triton interpreter)
    seed: int = 0
    llm: LLMSettings = field(default_factory=LLMSettings)
    compare: list[str] = field(default_factory=list)  # dotted callables timed beside the kernel
    timeout_s: float = 600.0  # one candidate's subprocess
    near_roofline_pct: float = 90.0  # stop once a candidate reaches this % of the roofline
    ssh: dict[str, Any] = field(default_factory=dict)  # config / identity / options for ssh:// runners


@dataclass
class Candidate:
    """One proposal: a full replacement of the user's file, and where it came from."""

    id: str
    source: str
    origin: str  # "knowledge:<rewrite>" or "llm"
    cards: list[str] = field(default_factory=list)
    description: str = ""
    parent: str | None = None
    uses: list[str] = field(default_factory=list)  # library modules the source imports (gate 1 checks them)


@dataclass
class GateResult:
    """One gate's verdict on one candidate; `feedback` is what goes back to the policy."""

    gate: str
    passed: bool
    reason: str = ""
    feedback: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    measured: bool = True  # False for gate 3 without a GPU


@dataclass
class Attempt:
    """A candidate and the gates it went through, with its reward (speedup over the user's kernel)."""

    candidate: Candidate
    gates: list[GateResult] = field(default_factory=list)
    speedup: float | None = None
    pct_roofline: float | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return len(self.gates) == len(GATES) and all(g.passed for g in self.gates)

    @property
    def verified(self) -> bool:
        """Gates 1 and 2 passed (all that can be said without a GPU)."""
        return len(self.gates) >= 2 and self.gates[0].passed and self.gates[1].passed

    @property
    def rejected_at(self) -> str | None:
        return next((g.gate for g in self.gates if not g.passed), None)

    def summary(self) -> dict[str, Any]:
        failed = next((g for g in self.gates if not g.passed), None)
        return {
            "id": self.candidate.id,
            "origin": self.candidate.origin,
            "description": self.candidate.description,
            "cards": self.candidate.cards,
            "rejected_at": failed.gate if failed else None,
            "reason": failed.reason if failed else "",
            "speedup": self.speedup,
            "pct_roofline": self.pct_roofline,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class OptimizeResult:
    """The outcome: the best candidate that passed every gate (or None) and all the evidence."""

    status: str  # "improved", "no-better", "unmeasured" (no GPU: gates 1-2 only) or "cancelled"
    target: str
    policy: str
    attempts: list[Attempt] = field(default_factory=list)
    best: Attempt | None = None
    patch: str = ""
    new_source: str | None = None
    diagnosis: dict[str, Any] = field(default_factory=dict)
    cards: list[dict[str, Any]] = field(default_factory=list)
    baseline: dict[str, Any] = field(default_factory=dict)
    reverify: dict[str, Any] | None = None
    stop_reason: str = ""
    notes: list[str] = field(default_factory=list)
    llm_usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    gpu_seconds: float = 0.0
    device: str = ""

    @property
    def improved(self) -> bool:
        return self.status == "improved"

    def rejected_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(GATES, 0)
        for a in self.attempts:
            if a.rejected_at:
                counts[a.rejected_at] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "target": self.target,
            "policy": self.policy,
            "device": self.device,
            "stop_reason": self.stop_reason,
            "candidates_proposed": len(self.attempts),
            "rejected": self.rejected_counts(),
            "best": self.best.summary() if self.best else None,
            "attempts": [
                {**a.summary(), "gates": [asdict(g) for g in a.gates]} for a in self.attempts
            ],
            "baseline": self.baseline,
            "reverify": self.reverify,
            "diagnosis": self.diagnosis,
            "cards": self.cards,
            "notes": self.notes,
            "llm_usage": self.llm_usage,
            "seconds": round(self.seconds, 2),
            "gpu_seconds": round(self.gpu_seconds, 2),
            "patch": self.patch,
        }
