"""docs/rules/ is generated from the rule modules; a stale page fails here, as ruff's check does."""

from __future__ import annotations

import subprocess
import sys

from cli_helpers import REPO

SCRIPT = REPO / "scripts" / "gen_rule_docs.py"


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_generated_rule_docs_are_current():
    r = _gen("--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_flags_stale_missing_and_extra_pages(tmp_path):
    assert _gen("--out", str(tmp_path)).returncode == 0
    assert _gen("--check", "--out", str(tmp_path)).returncode == 0
    (tmp_path / "DF002.md").write_text("old\n")
    (tmp_path / "MB001.md").unlink()
    (tmp_path / "ZZ999.md").write_text("left over\n")
    r = _gen("--check", "--out", str(tmp_path))
    assert r.returncode == 1
    assert "DF002.md" in r.stdout and "MB001.md" in r.stdout and "ZZ999.md" in r.stdout
    assert _gen("--out", str(tmp_path)).returncode == 0
    assert _gen("--check", "--out", str(tmp_path)).returncode == 0
