"""What the distribution installs: one `argus` namespace (plus `argus_lsp`), nothing generic.

A user's project with its own `analyzers/`, `agent/` or `knowledge/` package must neither shadow
ours nor be shadowed by it (issue: generic top-level names collided in site-packages)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _layout() -> tuple[list[str], dict[str, str]]:
    spec = importlib.util.spec_from_file_location("argus_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # __name__ is not __main__: setup() does not run
    return module._layout()


def test_every_installed_package_is_under_argus_or_argus_lsp():
    packages, package_dir = _layout()
    assert {p.split(".")[0] for p in packages} == {"argus", "argus_lsp"}
    assert package_dir == {"argus": "argus", "argus.analyzers": "analyzers", "argus.agent": "agent",
                           "argus.knowledge": "knowledge"}


def test_every_folder_with_python_code_is_packaged():
    packages, _ = _layout()
    for top in ("analyzers", "agent", "knowledge"):
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO)
            assert "argus." + ".".join(rel.parts) in packages, rel
    assert "argus.knowledge.kernels" in packages and "argus.knowledge.cards" in packages


def test_a_project_with_its_own_analyzers_and_agent_packages(tmp_path):
    """Run from inside such a project (its folder first on sys.path, as `python -c` and pytest put
    it): our modules are still ours, the project's own are untouched, and `argus check` works."""
    marker = tmp_path / "imported"
    for name in ("analyzers", "agent", "knowledge"):
        pkg = tmp_path / name
        pkg.mkdir()
        (pkg / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\nraise ImportError('theirs')\n")
    (tmp_path / "vadd.py").write_text(textwrap.dedent('''\
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
        '''))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    probe = "import argus.analyzers, argus.agent, argus.knowledge, argus_lsp.cli; print(argus.analyzers.__file__)"
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).is_relative_to(REPO)
    r = subprocess.run([sys.executable, "-m", "argus_lsp", "check", "vadd.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not marker.exists()
