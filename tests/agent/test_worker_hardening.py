"""Gate 2's worker against candidates that cheat in ways the checker cannot see (gate 1 is bypassed
here on purpose): each must be rejected by the runtime checks, in a real subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.agent.optimize import gate_correctness as g2
from argus.agent.optimize.runners import run_request
from argus.agent.optimize.splice import splice
from argus.agent.optimize.types import Candidate
from argus.agent.task import load_task

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "examples" / "naive_matmul.py"
SOURCE = PATH.read_text()
TASK = load_task(f"{PATH}::matmul_kernel")

HEAD = '''def matmul(a, b):
    M, K = a.shape
    K2, N = b.shape
'''
LAUNCH = '''    matmul_kernel[grid](a, b, c, {m}, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
'''
ALLOC = "    c = torch.empty((M, N), device=a.device, dtype=torch.float16)\n    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))\n"

CHEATS = {
    # the last row is never written: it holds whatever the allocator had (poisoned to NaN)
    "skips_last_row": (HEAD + ALLOC + LAUNCH.format(m="M - 1") + "    return c\n", "NaN"),
    # correct output, but the candidate scribbles on its input
    "writes_input": (HEAD + ALLOC + LAUNCH.format(m="M") + "    a.fill_(0.5)\n    return c\n", "wrote into input"),
    # the first result, cached and returned again: right once, wrong on the second input set
    "caches_output": ("_CACHE = {}\n\n\n" + HEAD + "    if (M, N) in _CACHE:\n        return _CACHE[(M, N)]\n" + ALLOC
                      + LAUNCH.format(m="M") + "    _CACHE[(M, N)] = c\n    return c\n", "set B"),
    # work handed to a background thread
    "starts_thread": ("import threading\n\n\n" + HEAD + ALLOC + LAUNCH.format(m="M")
                      + "    threading.Thread(target=lambda: __import__('time').sleep(5), daemon=True).start()\n    return c\n",
                      "thread"),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_runtime_checks_reject(name: str) -> None:
    code, expect = CHEATS[name]
    cand = Candidate(name, splice(SOURCE, code), "test")
    base = g2.base_request(TASK, SOURCE, backend="cpu", seed=11)
    req = g2.correctness_request(TASK, base, cand, on_gpu=False, seed=11)
    req["check_shapes"] = req["check_shapes"][:1]  # the ragged shape is enough here
    verdict = g2.verdict(run_request(req, timeout=240))
    assert not verdict.passed
    assert expect in verdict.reason, verdict.reason


def test_a_hanging_candidate_is_killed_at_its_timeout() -> None:
    cand = Candidate("hang", splice(SOURCE, HEAD + "    while True:\n        pass\n"), "test")
    base = g2.base_request(TASK, SOURCE, backend="cpu", seed=1)
    outcome = run_request(g2.correctness_request(TASK, base, cand, on_gpu=False, seed=1), timeout=20)
    assert outcome.timed_out and "timed out" in g2.verdict(outcome).reason
