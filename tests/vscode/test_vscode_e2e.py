"""The real-editor test (issue 7): the freshly built .vsix in code-server, driven by headless
Chromium through playwright-core (editors/vscode/test/e2e/run.mjs does the driving).

It opens the corpus mutant vector_add_v2.py (markers stripped), waits for MB002 at the unmasked
store in the Problems panel, runs the quick fix from the lightbulb, and checks the problem is gone
and the fix is in the saved file; with a task sidecar next to the file it also checks the server's
"▶ Profile" code lens shows and that a click on it comes back from the server (a result, or
"⚠ profile failed" where the server's environment has no torch). Then it opens the same folder
untrusted (Restricted Mode) and checks the finding still shows and no Profile lens does, then grants
trust and checks the lens appears (the extension restarted the server with trusted: true). Screenshots and logs go to test-artifacts/vscode/.
ARGUS_E2E_ARGUS overrides the server under test (default: the repository's .venv/bin/argus).
Set ARGUS_UPDATE_DOCS_IMG=1 to copy the diagnostic screenshot to docs/img/vscode-diagnostic.png.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from vscode_support import REPO, run_driver

pytestmark = pytest.mark.slow

ARTIFACTS = REPO / "test-artifacts" / "vscode"


def corpus_file() -> Path | None:
    for base in (REPO.parent / "shared", Path("/work/shared")):
        p = base / "corpus" / "vector_add_v2.py"
        if p.exists():
            return p
    return None


@pytest.fixture(scope="module")
def e2e_env(editor_env: dict[str, str]) -> dict[str, str]:
    """The environment for run.mjs: the editor, the .vsix, the server under test, the corpus file."""
    argus = Path(os.environ.get("ARGUS_E2E_ARGUS") or REPO / ".venv" / "bin" / "argus")
    if not argus.exists():
        pytest.fail(f"{argus} missing: scripts/test.sh installs the package into .venv")
    corpus = corpus_file()
    if corpus is None:
        pytest.fail("corpus file vector_add_v2.py not found in ../shared/corpus")
    return {**os.environ, **editor_env, "ARGUS_E2E_ARGUS": str(argus), "ARGUS_E2E_CORPUS": str(corpus)}


def test_quick_fix_in_real_vscode(e2e_env: dict[str, str]) -> None:
    result = run_driver("run.mjs", e2e_env, ARTIFACTS, timeout=480)
    assert result["code"] == "MB002" and result["line"] == 15
    assert "mask=" in result["fixedLine"]
    # The lens click reached the server's argus.profile and its answer came back as the lens title.
    assert result["profiled"] and (
        "profile failed" in result["profiled"] or " ms" in result["profiled"] or "s," in result["profiled"]
    )
    shot = Path(result["screenshot"])
    assert shot.exists() and shot.stat().st_size > 10_000
    if os.environ.get("ARGUS_UPDATE_DOCS_IMG") == "1":
        shutil.copyfile(shot, REPO / "docs" / "img" / "vscode-diagnostic.png")


def test_diagnostics_in_restricted_mode(e2e_env: dict[str, str]) -> None:
    """An untrusted folder: the extension runs (limited support) and still shows the finding."""
    result = run_driver(
        "run.mjs", {**e2e_env, "ARGUS_E2E_RESTRICTED": "1"}, ARTIFACTS / "restricted", timeout=480
    )
    assert result["restricted"] is True and result["line"] == 15
    assert result["profileLenses"] == 0  # profiling runs workspace code: not offered untrusted
    # Trust granted in the Workspace Trust editor: only a server restarted with trusted: true
    # offers the lens (the server reads trust from initializationOptions only).
    assert result["lensAfterTrust"] == "▶ Profile"
