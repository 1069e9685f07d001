"""The server's module table of its workspace (argus_lsp/project_files.WorkspaceSources): walked
once and kept for the keystroke checks, walked again after a save, or once it is old and one of
its folders changed (issue 13: the walk landed on one keystroke in every ten seconds)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from argus_lsp import project_files
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


def _settled(root: Path) -> None:
    """Every folder under `root` last modified a minute ago (a walk now can trust their times)."""
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, (time.time() - 60, time.time() - 60))


def _count_walks(monkeypatch) -> list[int]:
    walks: list[int] = []
    real = project_files._workspace_table

    def counting(*args):  # type: ignore[no-untyped-def]
        walks.append(1)
        return real(*args)

    monkeypatch.setattr(project_files, "_workspace_table", counting)
    return walks


def test_an_old_table_whose_folders_did_not_change_is_kept(tmp_path: Path, monkeypatch) -> None:
    _package(tmp_path)
    _settled(tmp_path)
    walks = _count_walks(monkeypatch)
    ws = WorkspaceSources(tmp_path)
    first = ws.modules()
    monkeypatch.setattr(WorkspaceSources, "TABLE_TTL_S", 0.0)
    (tmp_path / "pkg" / "ops.py").write_text("X = 2\n")  # an edit in place: no module added
    assert ws.modules() is first and len(walks) == 1  # looked at (one stat per folder), not walked


def test_a_module_made_in_a_settled_folder_is_seen_once_the_table_is_old(tmp_path: Path, monkeypatch) -> None:
    _package(tmp_path)
    _settled(tmp_path)
    walks = _count_walks(monkeypatch)
    ws = WorkspaceSources(tmp_path)
    ws.modules()
    (tmp_path / "pkg" / "sub").mkdir()  # a new folder changes its parent's time
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "deep.py").write_text("W = 4\n")
    assert not any(name.endswith("deep") for name in ws.modules())  # (within the time to live)
    monkeypatch.setattr(WorkspaceSources, "TABLE_TTL_S", 0.0)
    assert any(name.endswith("sub.deep") for name in ws.modules()) and len(walks) == 2


def test_a_walk_of_just_modified_folders_is_not_trusted_later(tmp_path: Path, monkeypatch) -> None:
    _package(tmp_path)  # (its folders were modified just now)
    walks = _count_walks(monkeypatch)
    ws = WorkspaceSources(tmp_path)
    ws.modules()
    monkeypatch.setattr(WorkspaceSources, "TABLE_TTL_S", 0.0)
    ws.modules()
    assert len(walks) == 2  # a change in the same clock tick as the walk could not be told apart
