"""Quick fixes: applied, the finding is gone and the file still parses (ruff's fix contract)."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "corpus"))
from argus.analyzers import check_source  # noqa: E402
from markers import strip_markers  # noqa: E402

SHARED = Path(os.environ.get("ARGUS_SHARED_CORPUS", Path(__file__).parents[3] / "shared" / "corpus"))
CASES = [("vector_add_v2.py", "MB002"), ("softmax_v3.py", "MB003"), ("matmul_grouped_v3.py", "NU001"), ("softmax_v2.py", "MB004")]


def apply(text: str, fix) -> str:
    data = text.encode()
    for e in sorted(fix.edits, key=lambda e: e.start_byte, reverse=True):
        data = data[: e.start_byte] + e.new_text.encode() + data[e.end_byte :]
    return data.decode()


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared corpus not found at {SHARED}")
@pytest.mark.parametrize(("name", "code"), CASES)
def test_fix_removes_the_finding(name: str, code: str) -> None:
    text = strip_markers((SHARED / name).read_text()).text
    for _ in range(4):  # fixes converge: apply until none of this code is left
        fixable = [f for f in check_source(text) if f.code == code and f.fix is not None]
        if not fixable:
            break
        text = apply(text, fixable[0].fix)
        ast.parse(text)
    assert not [f for f in check_source(text) if f.code == code]


def test_every_fix_in_the_shared_corpus_parses() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared corpus not found")
    for path in sorted(SHARED.glob("*.py")):
        text = strip_markers(path.read_text()).text
        for f in check_source(text):
            if f.fix is not None:
                ast.parse(apply(text, f.fix))
