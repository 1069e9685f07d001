"""Static anti-cheat checks, the splice contract of the llm policy, and gate 3's verdict arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.agent.optimize.gate_invariants import check_invariants
from argus.agent.optimize.gate_performance import verdict
from argus.agent.optimize.safety import check_candidate
from argus.agent.optimize.splice import SpliceError, extract_code, splice, unified_diff
from argus.agent.optimize.types import Candidate

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "examples" / "naive_matmul.py").read_text()
MOE = (ROOT / "examples" / "naive_moe.py").read_text()

LAUNCHER = '''def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    K2, N = b.shape
{body}
'''


def with_launcher(body: str) -> str:
    return splice(MATMUL, LAUNCHER.format(body=body))


@pytest.mark.parametrize(("body", "expect"), [
    ("    return torch.matmul(a, b)", "torch.matmul"),
    ("    return (a.float() @ b.float()).half()", "`@`"),
    ("    return a.mm(b)", ".mm()"),
    ("    import threading\n    threading.Thread(target=print).start()\n    return a", "threading"),
    ("    s = torch.cuda.Stream()\n    return a", "Stream"),
    ("    setattr(torch, 'matmul', None)\n    return a", "setattr"),
    ("    torch.matmul = lambda x, y: x\n    return a", "patches `torch.matmul`"),
    ("    import subprocess\n    return a", "subprocess"),
])
def test_anti_cheat_finds_each_forbidden_construct(body: str, expect: str) -> None:
    found = check_candidate(MATMUL, with_launcher(body), protected=("reference",))
    assert any(expect in v.message for v in found), found


def test_anti_cheat_ignores_the_users_own_code_and_allows_allocation() -> None:
    retiled = MOE.replace("BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32", "BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32")
    assert retiled != MOE and check_candidate(MOE, retiled) == []  # fused_moe's own torch.softmax is the user's
    ok = with_launcher("    c = torch.empty((M, N), device=a.device, dtype=torch.float16)\n    return c")
    assert check_candidate(MATMUL, ok) == []


def test_redefining_the_reference_is_refused() -> None:
    cand = splice(MATMUL, "def reference(a, b):\n    return a\n")
    assert any("reference" in v.message for v in check_candidate(MATMUL, cand, protected=("reference",)))


def test_splice_replaces_by_name_and_keeps_the_rest() -> None:
    code = extract_code("text\n```python\nimport math\n\nBLOCK = 3\n\ndef matmul(a, b):\n    return a\n```\nmore")
    out = splice(MATMUL, code)
    assert "def matmul(a, b):\n    return a\n" in out and out.count("def matmul(") == 1
    assert "import math\n" in out and "BLOCK = 3" in out
    assert "def reference(a: torch.Tensor" in out and "@triton.jit\ndef matmul_kernel(" in out
    diff = unified_diff(MATMUL, out, "naive_matmul.py")
    assert diff.startswith("--- a/naive_matmul.py\n+++ b/naive_matmul.py\n") and "+import math" in diff


@pytest.mark.parametrize("reply", ["no code here", "```python\ndef broken(:\n```", "```python\nx.y = 1\n```"])
def test_splice_rejects_unusable_replies(reply: str) -> None:
    with pytest.raises(SpliceError):
        splice(MATMUL, extract_code(reply))


def test_gate1_rejects_a_new_warning_and_any_error() -> None:
    # int32 row offsets: MB003 warnings the user's kernel does not have
    worse = MATMUL.replace("pid_m.to(tl.int64) * BLOCK_M", "pid_m * BLOCK_M")
    res = check_invariants(MATMUL, Candidate("c", worse, "test"), "naive_matmul.py")
    assert not res.passed and res.feedback[0]["code"] == "MB003" and res.feedback[0]["line"]
    stale = MATMUL.replace("b_ptrs += BLOCK_K * stride_bk", "b_ptrs += BLOCK_K * stride_bn")
    res = check_invariants(MATMUL, Candidate("c", stale, "test"), "naive_matmul.py")
    assert not res.passed and {"DF002"} <= {f["code"] for f in res.feedback}
    assert check_invariants(MATMUL, Candidate("c", MATMUL.replace("32, 32, 32", "64, 64, 32"), "t"), "x.py").passed
    missing = check_invariants(MATMUL, Candidate("c", "x = 1\n", "t"), "x.py", required=("matmul",))
    assert not missing.passed and "does not define matmul" in missing.reason


def test_gate3_refuses_a_time_above_the_roofline_and_a_slowdown() -> None:
    # 4096^3 fp16 in 0.01 ms would be 13,700 TFLOP/s on an H200 (peak ~990): a measurement bug
    row = {"shape": "sq", "candidate_ms": 0.01, "flops": 2 * 4096**3, "bytes": 2 * 3 * 4096**2}
    res = verdict([row], {"sq": 1.0}, "NVIDIA H200", "float16")
    assert not res.passed and "impossible" in res.reason
    slow = verdict([{**row, "candidate_ms": 1.5}], {"sq": 1.0}, "NVIDIA H200", "float16")
    assert not slow.passed and "below" in slow.reason
    good = verdict([{**row, "candidate_ms": 0.25}], {"sq": 1.0}, "NVIDIA H200", "float16")
    assert good.passed and good.details["speedup"] == pytest.approx(4.0) and 0 < good.details["pct_roofline"] < 100
