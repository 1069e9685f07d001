"""The server's module table of its workspace (argus_lsp/project_files.WorkspaceSources): walked
once and kept for the keystroke checks, walked again after a save or once it is old."""

from __future__ import annotations

from pathlib import Path

from argus_lsp.project_files import WorkspaceSources


def _package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text("X = 1\n")


def test_the_table_is_kept_between_checks_and_walked_again_after_invalidate(tmp_path: Path) -> None:
    _package(tmp_path)
    ws = WorkspaceSources(tmp_path)
    first = ws.modules()
    assert any(name.endswith("ops") for name in first)
    (tmp_path / "pkg" / "extra.py").write_text("Y = 2\n")
    assert ws.modules() is first  # a keystroke's check does not walk the folder again
    ws.invalidate()  # what a save does
    assert any(name.endswith("extra") for name in ws.modules())


def test_an_old_table_is_walked_again(tmp_path: Path, monkeypatch) -> None:
    _package(tmp_path)
    ws = WorkspaceSources(tmp_path)
    ws.modules()
    (tmp_path / "pkg" / "late.py").write_text("Z = 3\n")
    monkeypatch.setattr(WorkspaceSources, "TABLE_TTL_S", 0.0)
    assert any(name.endswith("late") for name in ws.modules())
