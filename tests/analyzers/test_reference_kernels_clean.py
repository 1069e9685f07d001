"""The knowledge library's expert kernels pass the checker: no error or warning findings."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.analyzers import check_source

KERNELS = sorted((Path(__file__).parents[2] / "knowledge" / "kernels").glob("*.py"))


@pytest.mark.parametrize("path", [p for p in KERNELS if "triton.jit" in p.read_text()], ids=lambda p: p.name)
def test_reference_kernel_is_clean(path: Path) -> None:
    serious = [f for f in check_source(path.read_text(), str(path)) if f.severity.fails_check]
    assert not serious, [(f.code, f.line, f.message) for f in serious]
