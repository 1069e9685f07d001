"""The knowledge policy's two rounds and the stop rule, on a hand-built history (no subprocess)."""

from __future__ import annotations

import threading
from pathlib import Path

from argus.agent.optimize.diagnose import diagnose
from argus.agent.optimize.history import History
from argus.agent.optimize.policies.base import PolicyContext
from argus.agent.optimize.policies.knowledge import KnowledgePolicy
from argus.agent.optimize.retrieve import cards_for
from argus.agent.optimize.stop import StopRule
from argus.agent.optimize.types import Attempt, GateResult

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "examples" / "naive_matmul.py"
SOURCE = PATH.read_text()


def context() -> PolicyContext:
    diag = diagnose(SOURCE, "matmul_kernel", str(PATH))
    return PolicyContext(SOURCE, str(PATH), "matmul_kernel", "matmul", diag, cards_for(diag))


def passed(attempt: Attempt, speedup: float, pct: float = 30.0) -> Attempt:
    attempt.gates = [GateResult("invariants", True), GateResult("correctness", True), GateResult("performance", True)]
    attempt.speedup, attempt.pct_roofline = speedup, pct
    return attempt


def failed(attempt: Attempt) -> Attempt:
    attempt.gates = [GateResult("invariants", False, "DF001")]
    return attempt


def test_round_two_stacks_the_other_rewrites_on_the_best_candidate() -> None:
    policy, ctx, history = KnowledgePolicy(), context(), History()
    first = policy.propose(ctx, history, 20)
    assert first[0].origin == "knowledge:expert" and len({c.source for c in first}) == len(first)
    for c in first:
        history.add(failed(Attempt(c)))
    retiled = next(a for a in history.attempts if a.candidate.origin == "knowledge:retile")
    passed(retiled, 2.0)
    second = policy.propose(ctx, history, 50)
    assert second and all(c.parent == retiled.candidate.id for c in second)
    assert {c.origin for c in second} >= {"knowledge:retile+pid_swizzle", "knowledge:retile+launch_tuning"}
    assert all("BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32" in c.source for c in second)
    assert policy.propose(ctx, history, 5) == []  # nothing new until the best changes


def test_stop_rule_reasons() -> None:
    history, policy, ctx = History(), KnowledgePolicy(), context()
    cands = policy.propose(ctx, history, 8)
    rule = StopRule(budget=8, minutes=10, near_roofline_pct=90, patience=3)
    assert rule.reason(history) is None
    cancel = threading.Event()
    cancel.set()
    assert rule.reason(history, cancel) == "cancelled"
    history.add(passed(Attempt(cands[0]), 1.5))
    for c in cands[1:4]:
        history.add(failed(Attempt(c)))
    assert rule.reason(history) == "no progress in the last 3 candidates"
    near = History()
    near.add(passed(Attempt(cands[0]), 3.0, pct=92.0))
    assert rule.reason(near).startswith("near the roofline")
    spent = StopRule(budget=1, minutes=10)
    assert spent.reason(near) == "budget of 1 candidates spent"
    late = StopRule(budget=9, minutes=0.0001, started=1.0)
    assert late.reason(History()).startswith("time budget")
