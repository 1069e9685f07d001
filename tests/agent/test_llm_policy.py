"""The `llm` policy end to end against a real local chat-completions server with scripted replies.

Gates 1 and 2 run for real (the checker, the worker subprocess under the Triton interpreter); only gate 3's
clock is faked, because there is no GPU here: a reply marked `# SLOW` is slower than the user's kernel,
one marked `# FAST` faster. Every wrong reply must be rejected at the right gate for the right reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from argus.agent.optimize.api import optimize
from argus.agent.optimize.gate_correctness import served_shape_names
from argus.agent.optimize.types import LLMSettings, OptimizeError, OptimizeRequest
from argus.agent.task import load_task
from scripted_openai import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
TARGET = str(ROOT / "examples" / "naive_matmul.py") + "::matmul_kernel"
REPLIES = Path(__file__).with_name("replies")
KEY = "sk-test-secret-never-in-a-report"


def reply(name: str) -> str:
    return (REPLIES / f"{name}.md").read_text()


def fake_timer(candidate) -> dict[str, float]:
    """Milliseconds per served shape: the user's kernel 10, `# SLOW` 20, `# FAST` 5 (tests only)."""
    names = [n for n in served_shape_names(load_task(TARGET)) if n]
    ms = 10.0
    if candidate is not None and "# SLOW" in candidate.source:
        ms = 20.0
    elif candidate is not None and "# FAST" in candidate.source:
        ms = 5.0
    return dict.fromkeys(names, ms)


def request(base_url: str, budget: int = 5) -> OptimizeRequest:
    return OptimizeRequest(target=TARGET, policy="llm", budget=budget, backend="cpu", timeout_s=300,
                           llm=LLMSettings(base_url=base_url, model="scripted", api_key_env="ARGUS_TEST_KEY",
                                           max_retries=3, timeout_s=30))


def test_scripted_replies_each_rejected_for_the_right_reason(monkeypatch) -> None:
    monkeypatch.setenv("ARGUS_TEST_KEY", KEY)
    script = [429, reply("contraction_bug"), reply("zeros"), reply("torch_matmul"), reply("slower"), reply("faster")]
    stages = []
    with ScriptedOpenAI(script) as server:
        result = optimize(request(server.base_url), progress=lambda s, n: stages.append((s, n)), timer=fake_timer)
        prompts = [r["messages"][-1]["content"] for r in server.requests]
        auth = server.auth
    by_id = {a.candidate.id: a for a in result.attempts}
    assert [a.rejected_at for a in result.attempts] == ["invariants", "correctness", "invariants", "performance", None]
    bug, zeros, matmul, slower, faster = (by_id[f"m0{i}"] for i in range(1, 6))
    assert bug.gates[0].feedback[0]["code"] in ("DF001", "MB001")
    assert any(f["code"] == "DF001" and f["witness"] for f in bug.gates[0].feedback)
    assert "relative L2 error" in zeros.gates[1].reason
    assert "torch.matmul" in matmul.gates[0].reason and matmul.gates[0].reason.startswith("anti-cheat")
    assert "below" in slower.gates[2].reason and slower.speedup == pytest.approx(0.5)
    assert faster.passed and faster.speedup == pytest.approx(2.0)
    # the 429 was retried with the same prompt; the witness of DF001 reached the next prompt
    assert len(prompts) == 6 and prompts[0] == prompts[1]
    witness = next(f["witness"] for f in bug.gates[0].feedback if f["code"] == "DF001")
    assert "DF001" in prompts[2] and witness in prompts[2]
    assert "rejected at invariants" in prompts[2] and "rejected at performance" in prompts[5]
    assert all(a == f"Bearer {KEY}" for a in auth)
    assert result.status == "improved" and result.best is faster
    assert result.reverify and result.reverify["passed"]
    assert "64, 64, 32" in result.patch
    assert result.llm_usage["calls"] == 5 and result.llm_usage["prompt_tokens"] > 0
    assert KEY not in json.dumps(result.to_json(), default=str)
    assert ("gates", 1) in stages and stages[-1][0] == "done"


def test_missing_settings_and_unreachable_endpoint_fail_at_once(monkeypatch) -> None:
    monkeypatch.delenv("ARGUS_TEST_KEY", raising=False)
    with pytest.raises(OptimizeError, match="ARGUS_TEST_KEY"):
        optimize(request("http://127.0.0.1:9/v1"))
    monkeypatch.setenv("ARGUS_TEST_KEY", KEY)
    with pytest.raises(OptimizeError, match="no endpoint"):
        optimize(request(""))
    with pytest.raises(OptimizeError, match="cannot reach"):
        optimize(request("http://127.0.0.1:9/v1"))  # port 9 (discard): nothing listens
