"""Correct kernels in the idioms of public packages that trip the checker (tests/corpus_realworld).

Each file reproduces one cause of false findings (or, for X1, of a crash) found by the real-world
triage (docs/realworld.md; the cause is named in the file's first line). The checker must give no error or warning on any
of them. The ones it still flags are strict xfails with their cause, so a fix that removes the
false finding fails the run until the file is taken off the list, and the list stays true. Each
kernel's own `__main__` compares it with a torch reference under Triton's CPU interpreter, so
"correct" is checked, not claimed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from argus.analyzers import Severity, check_source, list_kernels

FOLDER = Path(__file__).resolve().parents[1] / "corpus_realworld"
FILES = sorted(p for p in FOLDER.glob("*.py") if not p.name.startswith("_"))

# Still flagged today: file -> the cause (codes as in docs/realworld.md).
KNOWN_FALSE_FINDINGS = {
    "zeros_band.py": "L7: band written into a torch.zeros output reported as uncovered (GR001, DF004)",
}


def test_every_file_names_its_cause_and_holds_a_kernel() -> None:
    assert len(FILES) >= 10
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# cause "), f"{path.name}: first line must name the cause"
        assert list_kernels(text), f"{path.name}: no @triton.jit kernel"
    assert set(KNOWN_FALSE_FINDINGS) <= {p.name for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_error_or_warning(path: Path, request: pytest.FixtureRequest) -> None:
    reason = KNOWN_FALSE_FINDINGS.get(path.name)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    findings = check_source(path.read_text(encoding="utf-8"), str(path))
    assert not [f for f in findings if f.code == "AR002"], f"{path.name} does not parse"
    bad = [(f.code, f.line, f.message) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert not bad, f"{path.name}: {bad}"


_HAVE_TRITON = all(importlib.util.find_spec(m) is not None for m in ("torch", "triton"))


@pytest.mark.slow
@pytest.mark.skipif(not _HAVE_TRITON, reason="torch and triton (the dev extras) run the self-checks")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_kernel_matches_its_reference_under_the_interpreter(path: Path) -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(FOLDER)}
    run = subprocess.run(
        [sys.executable, str(path)],
        cwd=FOLDER,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]
