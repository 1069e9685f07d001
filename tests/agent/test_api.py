"""The Python entry points the editor and MCP tools call: evaluate_candidate, and optimize's cancel."""

from __future__ import annotations

import threading
from pathlib import Path

from argus.agent.optimize.api import evaluate_candidate, optimize
from argus.agent.optimize.types import OptimizeRequest

ROOT = Path(__file__).resolve().parents[2]
TARGET = str(ROOT / "examples" / "naive_matmul.py") + "::matmul_kernel"
SOURCE = (ROOT / "examples" / "naive_matmul.py").read_text()


def test_evaluate_candidate_reports_each_gate() -> None:
    bad = SOURCE.replace("b_ptrs += BLOCK_K * stride_bk", "b_ptrs += BLOCK_K * stride_bn")
    attempt = evaluate_candidate(TARGET, bad, backend="cpu", timeout_s=300)
    assert [g.gate for g in attempt.gates] == ["invariants"] and not attempt.passed
    assert "DF002" in {f["code"] for f in attempt.gates[0].feedback}
    good = SOURCE.replace("32, 32, 32", "64, 32, 32")
    attempt = evaluate_candidate(TARGET, good, backend="cpu", timeout_s=300)
    assert [(g.gate, g.passed) for g in attempt.gates] == [("invariants", True), ("correctness", True), ("performance", False)]
    assert attempt.verified and attempt.gates[2].measured is False


def test_cancel_stops_the_running_worker() -> None:
    cancel = threading.Event()

    def progress(stage: str, n: int) -> None:
        if stage == "gates":
            cancel.set()  # as the editor's cancel button would, while a candidate's worker runs

    result = optimize(OptimizeRequest(TARGET, policy="knowledge", budget=5, backend="cpu"), progress=progress,
                      cancel=cancel)
    assert result.status == "cancelled" and result.stop_reason == "cancelled" and result.best is None
    assert len(result.attempts) == 1 and "cancelled" in result.attempts[0].gates[-1].reason
