"""A hostile workspace: modules named like the server's own imports, each of which leaves a marker
file when it is imported (that is, run), next to a user's kernel with a known bug.

A launch path is safe when the server started from it, in that workspace, publishes the kernel's
finding and no marker appears. The same folder is also "a user project with its own `analyzers/`
and `agent/` packages": the finding proves the server imported Argus's, not the project's.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from lsp_support import mutant
from rpc_client import RpcClient

# every name the server imports at start or on a check, plus the interpreter's startup hooks
SHADOWS = [
    "numpy.py",
    "pygls.py",
    "lsprotocol.py",
    "tree_sitter.py",
    "tree_sitter_python.py",
    "attrs.py",
    "cattrs.py",
    "typing_extensions.py",
    "sitecustomize.py",
    "usercustomize.py",
    "argus_lsp/__init__.py",
    "argus_lsp/server.py",
    "argus_lsp/__main__.py",
    "argus_lsp/cli.py",
    "analyzers/__init__.py",
    "agent/__init__.py",
    "knowledge/__init__.py",
]


@dataclass
class Workspace:
    root: Path
    markers: Path
    kernel: Path
    expect_line: int  # 0-based line of the MB002 the kernel has

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


def make_workspace(tmp: Path) -> Workspace:
    root = tmp / "project"
    markers = tmp / "markers"  # outside the project, so nothing in it is importable either
    markers.mkdir(parents=True)
    for rel in SHADOWS:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tag = rel.replace("/", ".")
        path.write_text(f"open({str(markers / tag)!r}, 'w').close()\n")
    text, expect, _ = mutant("vector_add_v2")
    kernel = root / "kernels" / "vadd.py"
    kernel.parent.mkdir()
    kernel.write_text(text)
    (root / "pyproject.toml").write_text('[project]\nname = "hostile"\n')
    return Workspace(root, markers, kernel, min(expect["MB002"]))


def console_script(name: str) -> str:
    """`argus` / `argus-lsp` next to the interpreter (the venv's console scripts)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        import pytest

        pytest.fail(f"{path} is missing: install the project (pip install -e .) into this environment")
    return str(path)


def findings_in(ws: Workspace, argv: list[str], cwd: Path | str, env: dict[str, str]) -> list[dict]:
    """Start the server exactly so, open the workspace's kernel, return its published diagnostics."""
    client = RpcClient(argv, cwd=cwd, env=env)
    try:
        client.initialize(ws.root, ["utf-16"])
        uri = ws.kernel.as_uri()
        client.open(uri, ws.kernel.read_text())
        return client.published(uri, 1, timeout=90)
    finally:
        client.close()


def assert_safe(ws: Workspace, diagnostics: list[dict]) -> None:
    assert ws.ran() == [], f"workspace modules were imported: {ws.ran()}"
    assert any(d["code"] == "MB002" and d["range"]["start"]["line"] == ws.expect_line for d in diagnostics), (
        diagnostics
    )
