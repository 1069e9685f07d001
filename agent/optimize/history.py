"""History: every attempt with its gate results and reward, fed to the next proposal (in-context learning)."""

from __future__ import annotations

from argus.agent.optimize.types import Attempt


class History:
    """The attempts so far, in order; policies read `table()` and `feedback()`."""

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []

    def add(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)

    def best(self) -> Attempt | None:
        passed = [a for a in self.attempts if a.passed and a.speedup]
        return max(passed, key=lambda a: a.speedup or 0.0) if passed else None

    def best_verified(self) -> Attempt | None:
        return next((a for a in self.attempts if a.verified), None)

    def seen(self, source: str) -> bool:
        return any(a.candidate.source == source for a in self.attempts)

    def table(self) -> str:
        """A markdown table the `llm` prompt includes: one row per attempt."""
        rows = ["| # | origin | result | reward (speedup) |", "|---|---|---|---|"]
        for i, a in enumerate(self.attempts, 1):
            failed = next((g for g in a.gates if not g.passed), None)
            result = f"rejected at {failed.gate}: {failed.reason[:160]}" if failed else "passed every gate"
            reward = f"{a.speedup:.3f}x" if a.speedup else "-"
            rows.append(f"| {i} | {a.candidate.origin} | {result.replace('|', '/')} | {reward} |")
        return "\n".join(rows)

    def feedback(self) -> list[dict]:
        """The structured violations of the last rejected attempt (code, line, message, witness)."""
        for a in reversed(self.attempts):
            failed = next((g for g in a.gates if not g.passed), None)
            if failed is not None:
                return [{"gate": failed.gate, **f} for f in failed.feedback] or [{"gate": failed.gate, "message": failed.reason}]
        return []
