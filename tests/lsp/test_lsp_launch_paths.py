"""Starting the server from inside a hostile project runs none of the project's files (issue 13).

Generic LSP clients (and people) start `argus serve` with the project as working directory; a
console script puts its own bin directory, not the working directory, first on sys.path. The
`python -P -m argus_lsp.server` form that the VS Code extension uses is safe in any working
directory. Neovim's launch is tested in test_lsp_nvim.py, VS Code's in tests/vscode.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hostile import assert_safe, console_script, findings_in, make_workspace
from lsp_support import server_env


@pytest.mark.parametrize("script", ["argus", "argus-lsp"])
def test_console_script_started_in_the_project(tmp_path: Path, script: str) -> None:
    ws = make_workspace(tmp_path)
    argv = [console_script(script)] + (["serve"] if script == "argus" else [])
    assert_safe(ws, findings_in(ws, argv, ws.root, server_env()))


def test_python_dash_p_module_started_in_the_project(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    argv = [sys.executable, "-P", "-m", "argus_lsp.server"]
    assert_safe(ws, findings_in(ws, argv, ws.root, server_env()))


def test_the_workspace_really_is_hostile(tmp_path: Path) -> None:
    # the control: the old VS Code launch (`python -m argus_lsp.server` in the workspace folder)
    # runs the project's argus_lsp package, so the markers above do detect a bad launch path
    ws = make_workspace(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "argus_lsp.server"],
        cwd=ws.root,
        env=server_env(),
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert "argus_lsp.__init__.py" in ws.ran()
