"""Which PF hint a measurement supports (agent.profile.hints), and `argus profile` printing it.

A hint needs a GPU's numbers and peaks; this machine has no GPU, so the results come from the
committed H200 run (benchmarks/results/profile-h200.json, written by scripts/gpu/profile_h200.sh),
and the CLI tests replace only the `profile` call with a replay of that run: the task loading,
the checker on the file, the hint decision and the printing are the real ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from argus.agent.profile import cli, hints
from argus.agent.profile.result import ProfileResult
from argus.analyzers import Finding, Severity, Span, check_source

from tests.profile.conftest import ROOT, TASKS

H200_JSON = ROOT / "benchmarks/results/profile-h200.json"
ATTENTION = TASKS / "attention.py"


def _h200(kernel: str) -> dict:
    return next(r for r in json.loads(H200_JSON.read_text()) if r["kernel"] == kernel)


def _static(code: str, kernel: str) -> Finding:
    return Finding(code, "x", Severity.HINT, kernel, Span(0, 1, (0, 0), (0, 1)), "static")


def test_measured_findings_pick_codes_by_bottleneck() -> None:
    src = ATTENTION.read_bytes()
    r = ProfileResult.from_json(_h200("attn_fwd_kernel"))  # compute-bound at 44%
    (f,) = hints.measured_findings(r, "attn_fwd_kernel", src, [])
    assert f.code == "PF004" and f.severity == Severity.HINT and f.witness["bound"] == "compute-bound"
    assert f.witness["card"] and f"card `{f.witness['card']}`" in f.message
    assert src[f.span.start_byte : f.span.end_byte] == b"attn_fwd_kernel"
    assert f.span.start_point == (11, 4)  # `def attn_fwd_kernel(` on the 12th line
    # a static PF hint in the kernel whose card covers compute is the one the measurement backs
    (f,) = hints.measured_findings(r, "attn_fwd_kernel", src, [_static("PF005", "attn_fwd_kernel")])
    assert f.code == "PF005" and "checker's PF005" in f.message
    # PF003's card covers memory only: not backed for a compute-bound kernel
    (f,) = hints.measured_findings(r, "attn_fwd_kernel", src, [_static("PF003", "attn_fwd_kernel")])
    assert f.code == "PF004"
    # a PF finding in another kernel backs nothing here
    (f,) = hints.measured_findings(r, "attn_fwd_kernel", src, [_static("PF005", "other_kernel")])
    assert f.code == "PF004"

    gemm = ProfileResult.from_json(_h200("matmul_kernel"))  # 68% of peak: no hint
    assert hints.measured_findings(gemm, "matmul_kernel", (TASKS / "gemm.py").read_bytes(), []) == []

    data = _h200("attn_fwd_kernel")
    data["roofline"].update(bound="memory-bound", pct_memory=22.0, pct_of_roof=22.0)
    (f,) = hints.measured_findings(ProfileResult.from_json(data), "attn_fwd_kernel", src, [])
    assert f.code == "PF003" and "(22% of H200 HBM peak)" in f.message and "memory-bound" in f.message
    data["roofline"].update(bound="latency-bound", pct_of_roof=8.0)
    (f,) = hints.measured_findings(ProfileResult.from_json(data), "attn_fwd_kernel", src, [])
    assert f.code == "PF001" and "latency-bound kernel" in f.message
    data["backend"], data["peak"] = "cpu", None
    assert hints.measured_findings(ProfileResult.from_json(data), "attn_fwd_kernel", src, []) == []


def test_kernel_name_span_falls_back_to_the_task_line() -> None:
    src = b"import triton\r\n\r\n@triton.jit\r\ndef k(x):\r\n    pass\r\n"
    assert hints.kernel_name_span(src, "k") == (src.index(b"k(x)"), src.index(b"k(x)") + 1)
    assert hints.kernel_name_span(src, "kernel_gone") is None
    start, end = hints.kernel_name_span(src, "kernel_gone", fallback_line=3)
    assert src[start:end] == b"@triton.jit"
    start, end = hints.kernel_name_span(src, "kernel_gone", fallback_line=99)  # past the end: last line
    assert (start, end) == (len(src), len(src))


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """`profile` answers with the committed H200 measurement of the task's kernel."""
    runs = {r["kernel"]: r for r in json.loads(H200_JSON.read_text())}

    def replayed(task, **_options) -> ProfileResult:
        return ProfileResult.from_json(runs[task.kernel])

    monkeypatch.setattr(cli, "profile", replayed)


def _editor_hint(path: Path) -> Finding:
    """What the language server derives for the same run: the checker's findings pick the code."""
    src = path.read_bytes()
    (f,) = hints.measured_findings(
        ProfileResult.from_json(_h200("attn_fwd_kernel")),
        "attn_fwd_kernel",
        src,
        check_source(src, str(path)),
    )
    return f


def test_cli_prints_the_editors_hint(replay: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([f"{ATTENTION}::attn_fwd_kernel", f"{TASKS / 'gemm.py'}::matmul_kernel"]) == 0
    out = capsys.readouterr().out
    want = _editor_hint(ATTENTION)
    assert f"  hint {want.code} ({want.name}): {want.message}\n" in out
    assert "435 TFLOP/s (44% of H200 bfloat16 peak)" in out and "card `" in out
    assert out.count("  hint ") == 1  # the GEMM at 68% of its roof gets none


def test_cli_json_carries_the_hints(replay: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([f"{ATTENTION}::attn_fwd_kernel", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    want = _editor_hint(ATTENTION)
    assert doc["hints"] == [
        {
            "code": want.code,
            "name": want.name,
            "line": 12,
            "message": want.message,
            "card": want.witness["card"],
        }
    ]
    assert ProfileResult.from_json(doc).lens_text() == doc["lens"]  # derived keys are dropped


def test_cli_honours_ignore_comments(
    replay: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("attention.py", "attention.py.argus.toml"):
        shutil.copy(TASKS / name, tmp_path / name)
    kernel = tmp_path / "attention.py"
    code = _editor_hint(kernel).code
    text = kernel.read_text().replace(
        "def attn_fwd_kernel(", f"def attn_fwd_kernel(  # argus: ignore[{code}]\n", 1
    )
    kernel.write_text(text)
    assert cli.main([f"{kernel}::attn_fwd_kernel"]) == 0
    out = capsys.readouterr().out
    assert "2.53 ms" in out and "  hint " not in out
