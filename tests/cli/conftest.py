"""Fixtures for the CLI tests: `argus(*args)` runs the CLI in tmp_path; `corpus` is shared/corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import CORPUS, Result, run_argus


@pytest.fixture
def argus(tmp_path: Path):
    """`argus(*args)` runs the CLI in tmp_path."""

    def run(*args: str | os.PathLike[str], env: dict[str, str] | None = None, stdin: str = "") -> Result:
        return run_argus(*args, cwd=tmp_path, env=env, stdin=stdin)

    return run


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the shared corpus is missing: {CORPUS}")
    return CORPUS
