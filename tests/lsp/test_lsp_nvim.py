"""A real editor: headless Neovim (Debian's 0.7.2 in CI) with editors/nvim/argus.lua.

Neovim 0.7 speaks UTF-16 positions and keeps byte columns in vim.diagnostic, so a diagnostic
after "é🎉" on its line checks the server's UTF-16 conversion through a real client's inverse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_support import HALF_TYPED, REPO, SERVER, UNICODE_HALF_TYPED, mutant

from analyzers import check_source

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not on PATH (CI installs it: scripts/setup.d/10-neovim.sh)"
)


def run_nvim(tmp_path: Path, text: str) -> dict:
    src = tmp_path / "kernel.py"
    src.write_text(text)
    out = tmp_path / "diagnostics.json"
    env = {
        **os.environ,
        "ARGUS_LSP_CMD": json.dumps(SERVER),
        "ARGUS_NVIM_OUT": str(out),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no user config, shada or swap files leak in
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    init = REPO / "editors" / "nvim" / "test_init.lua"
    proc = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(init), str(src)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), f"nvim wrote no report (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    report = json.loads(out.read_text())
    assert report["published"], "no publishDiagnostics reached Neovim"
    return report


def test_nvim_shows_ar002_at_the_byte_column(tmp_path: Path) -> None:
    (finding,) = check_source(UNICODE_HALF_TYPED)
    report = run_nvim(tmp_path, UNICODE_HALF_TYPED)
    got = [(d["code"], d["lnum"], d["col"]) for d in report["diagnostics"]]
    assert got == [("AR002", finding.span.start_point[0], finding.span.start_point[1])]


def test_nvim_half_typed_kernel(tmp_path: Path) -> None:
    report = run_nvim(tmp_path, HALF_TYPED)
    assert [d["code"] for d in report["diagnostics"]] == ["AR002"]
    assert report["diagnostics"][0]["source"] == "argus"


def test_nvim_shows_the_mutants_code(tmp_path: Path) -> None:
    text, expect, _ = mutant("vector_add_v2")
    report = run_nvim(tmp_path, text)
    assert any(d["code"] == "MB002" and d["lnum"] in expect["MB002"] for d in report["diagnostics"]), report
