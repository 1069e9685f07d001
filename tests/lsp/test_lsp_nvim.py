"""A real editor: headless Neovim (Debian's 0.7.2 in CI) with editors/nvim/argus.lua.

Neovim 0.7 speaks UTF-16 positions and keeps byte columns in vim.diagnostic, so a diagnostic
after "é🎉" on its line checks the server's UTF-16 conversion through a real client's inverse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from argus.analyzers import check_source
from hostile import console_script, make_workspace
from lsp_support import HALF_TYPED, REPO, SERVER, UNICODE_HALF_TYPED, mutant

from argus_lsp.server import client_trusts

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not on PATH (CI installs it: scripts/setup.d/10-neovim.sh)"
)


def run_nvim(
    tmp_path: Path,
    text: str | None,
    *,
    src: Path | None = None,
    cwd: Path | None = None,
    cmd: list[str] = SERVER,
    env_extra: dict[str, str] | None = None,
) -> dict:
    """Headless Neovim on `src` (default: `text` written to tmp_path/kernel.py), started in `cwd`."""
    if src is None:
        src = tmp_path / "kernel.py"
    if text is not None:
        src.write_text(text)
    out = tmp_path / "diagnostics.json"
    env = {
        **os.environ,
        **(env_extra or {}),
        "ARGUS_LSP_CMD": json.dumps(cmd),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ARGUS_NVIM_OUT": str(out),
        "PYTHONPATH": os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no user config, shada or swap files leak in
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    init = REPO / "editors" / "nvim" / "test_init.lua"
    proc = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(init), str(src)],
        env=env,
        cwd=cwd or tmp_path,
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


# -- safety: the launch path and trust --------------------------------------------------------------
@pytest.mark.parametrize("how", ["argus serve", "python -m"])
def test_nvim_in_a_hostile_project_runs_none_of_its_files(tmp_path: Path, how: str) -> None:
    # Neovim started inside the project (its usual cwd): argus.lua starts the server in
    # stdpath("cache")/argus, so even `python -m argus_lsp.server`, which puts its working
    # directory first on sys.path, imports nothing of the project's.
    ws = make_workspace(tmp_path)
    cmd = (
        [console_script("argus"), "serve"]
        if how == "argus serve"
        else [sys.executable, "-m", "argus_lsp.server"]
    )
    report = run_nvim(tmp_path, None, src=ws.kernel, cwd=ws.root, cmd=cmd)
    assert ws.ran() == [], ws.ran()
    assert any(d["code"] == "MB002" and d["lnum"] == ws.expect_line for d in report["diagnostics"]), report
    (client,) = report["clients"]
    assert client["cmd_cwd"] == str(tmp_path / "cache" / "nvim" / "argus")  # stdpath("cache")/argus
    assert client["init_options"]["argus"]["trusted"] is False  # no opt-in: untrusted
    assert report["messages"] == []  # 0.7's empty settings table reached the server as an object


def test_nvim_trust_is_an_opt_in_per_project(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    src = root / "k.py"
    report = run_nvim(tmp_path, HALF_TYPED, src=src, env_extra={"ARGUS_NVIM_TRUSTED_ROOT": str(root)})
    (client,) = report["clients"]
    assert client["root_dir"] == str(root)
    assert client["init_options"]["argus"] == {"debounceMs": 0, "trusted": True}
    assert client_trusts(client["init_options"]) is True
    other = run_nvim(tmp_path, HALF_TYPED, env_extra={"ARGUS_NVIM_TRUSTED_ROOT": str(root)})
    assert client_trusts(other["clients"][0]["init_options"]) is False
