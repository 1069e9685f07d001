"""Shared helpers for the profiling tests: paths, and an interpreter that has torch and triton."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASKS = Path(__file__).resolve().parent / "tasks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@functools.cache
def triton_python() -> str | None:
    """The first interpreter that imports torch and triton: $ARGUS_TEST_TRITON_PYTHON, the
    project's .venv (CI installs them there, scripts/setup.d/30-triton-cpu.sh), /work/tvenv,
    or the one running the tests."""
    candidates = [
        os.environ.get("ARGUS_TEST_TRITON_PYTHON"),
        str(ROOT / ".venv/bin/python"),
        "/work/tvenv/bin/python",
        sys.executable,
    ]
    for py in filter(None, candidates):
        if not os.path.exists(py):
            continue
        try:
            ok = subprocess.run([py, "-c", "import torch, triton"], capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if ok.returncode == 0:
            return py
    return None


@pytest.fixture(scope="session")
def tpy() -> str:
    py = triton_python()
    if py is None:
        pytest.skip("no interpreter with torch + triton (scripts/setup.d/30-triton-cpu.sh installs them)")
    return py
