"""The marked corpora: every mutant detected at a marked line, no error or warning elsewhere.

The shared corpus (../shared/corpus, beside the checkout in CI) must be perfect. Our own corpus
(tests/corpus_own, other authors' styles) lists its known gaps below as strict xfails: a gap
that closes fails the run until it is removed from the list, so the list stays true.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from argus.analyzers import check_source
from markers import judge, strip_markers

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ARGUS_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
OWN = ROOT / "tests" / "corpus_own"
STYLES = ROOT / "tests" / "corpus_styles"

# Known gaps of the checker on our own corpus, each with the reason (see README "Known gaps").
OWN_MISSES = {
    "chunked_cumsum_v2.py": "the carry is added before the chunk's scan: an order of updates, not a tag mismatch",
    "rotary_v2.py": "swapped halves keep the same head-dim symbol on both sides",
    "rotary_v3.py": "cos rows are sized generously when the launch does not relate them",
}
OWN_FALSE_POSITIVES: dict[str, str] = {}
# The style probes' manifest: every file's idiom and seeded bug; `known_missed` gaps run as
# strict xfails (tests/corpus_styles/README.md).
STYLE_MANIFEST = tomllib.loads((STYLES / "manifest.toml").read_text(encoding="utf-8"))["files"]


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_") and "triton" in p.read_text())


def _check(path: Path):
    marked = strip_markers(path.read_text(encoding="utf-8"))
    return marked, check_source(marked.text, str(path))


SHARED_FILES = _files(SHARED)


@pytest.mark.skipif(not SHARED_FILES, reason=f"shared corpus not found at {SHARED} (CI has it beside the clone)")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.name)
def test_shared_corpus(path: Path) -> None:
    marked, findings = _check(path)
    hit, fps = judge(marked, findings)
    if marked.is_mutant:
        assert hit, f"{path.name}: expected {marked.expect}, got {[(f.code, f.line) for f in findings]}"
    assert not fps, f"{path.name}: false positives {[(f.code, f.line, f.message) for f in fps]}"


def test_shared_corpus_is_present_in_ci() -> None:
    if os.environ.get("CI") == "true":
        assert SHARED_FILES, f"CI must run the shared corpus; nothing at {SHARED}"


@pytest.mark.parametrize("path", _files(OWN), ids=lambda p: p.name)
def test_own_corpus(path: Path, request: pytest.FixtureRequest) -> None:
    reason = OWN_MISSES.get(path.name) or OWN_FALSE_POSITIVES.get(path.name)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    marked, findings = _check(path)
    hit, fps = judge(marked, findings)
    if marked.is_mutant:
        assert hit, f"{path.name}: expected {marked.expect}, got {[(f.code, f.line) for f in findings]}"
    assert not fps, f"{path.name}: false positives {[(f.code, f.line, f.message) for f in fps]}"


@pytest.mark.parametrize("path", _files(STYLES), ids=lambda p: p.name)
def test_style_probes(path: Path, request: pytest.FixtureRequest) -> None:
    reason = STYLE_MANIFEST.get(path.name, {}).get("known_missed")
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    marked, findings = _check(path)
    hit, fps = judge(marked, findings)
    if marked.is_mutant:
        assert hit, f"{path.name}: expected {marked.expect}, got {[(f.code, f.line) for f in findings]}"
    assert not fps, f"{path.name}: false positives {[(f.code, f.line, f.message) for f in fps]}"


def test_style_manifest_lists_every_probe() -> None:
    names = {p.name for p in _files(STYLES)}
    assert names == set(STYLE_MANIFEST), f"manifest.toml and the files differ: {names ^ set(STYLE_MANIFEST)}"
    for name, entry in STYLE_MANIFEST.items():
        mutant = strip_markers((STYLES / name).read_text(encoding="utf-8")).is_mutant
        assert ("bug" in entry) == mutant, f"{name}: a mutant names its bug, a correct file does not"


def test_every_own_file_is_a_kernel_module() -> None:
    assert len(_files(OWN)) >= 50
