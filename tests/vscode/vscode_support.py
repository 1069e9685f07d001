"""Shared helpers for the VS Code extension tests (docs/vscode.md)."""
# Imported by name, as tests/lsp does with lsp_support (pytest puts this folder on sys.path).

from __future__ import annotations

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
