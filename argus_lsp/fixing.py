"""`argus check --fix` and `--diff`: apply the quick fixes the checker computed, only the safe ones.

The rules attach a fix only when the code leaves one reading (fixes.py in the rules); this module
adds the file-level half of "unambiguous": a fix whose edits touch the same bytes as a different
fix (or insert at the same point) is left out together with that other fix, because which one the
author meant is not something the source says. Identical fixes offered by several findings are
applied once. A file is only written back when it still holds exactly the bytes that were checked,
so an editor saving it in the meantime never loses its change.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from argus.analyzers import Finding, TextEdit


class FileChanged(Exception):
    """The file on disk is no longer the text that was checked; nothing was written."""


@dataclass(frozen=True)
class FixPlan:
    edits: tuple[TextEdit, ...]  # sorted, pairwise disjoint
    fixed: int  # findings the edits fix
    conflicting: int  # findings whose fix was left out because it clashes with another fix


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    """Whether the two edits' order or extent is open to doubt: they share bytes, or one inserts
    at a point inside or at either end of the other (two insertions at one point included)."""
    if a.start_byte == a.end_byte or b.start_byte == b.end_byte:
        point, other = (a, b) if a.start_byte == a.end_byte else (b, a)
        return other.start_byte <= point.start_byte <= other.end_byte
    return a.start_byte < b.end_byte and b.start_byte < a.end_byte


def plan(findings: Iterable[Finding], source_length: int) -> FixPlan:
    """The edits to make for `findings`' fixes, leaving out fixes that clash with one another."""
    users: dict[tuple[TextEdit, ...], int] = {}
    for f in findings:
        if f.fix is None or not f.fix.edits:
            continue
        edits = tuple(sorted(f.fix.edits, key=lambda e: (e.start_byte, e.end_byte)))
        if all(0 <= e.start_byte <= e.end_byte <= source_length for e in edits):
            users[edits] = users.get(edits, 0) + 1
    fixes = list(users)
    clashing: set[int] = set()
    for i, mine in enumerate(fixes):
        for j in range(i + 1, len(fixes)):
            if any(_overlap(a, b) for a in mine for b in fixes[j]):
                clashing |= {i, j}
    kept = [fix for i, fix in enumerate(fixes) if i not in clashing]
    edits = tuple(sorted((e for fix in kept for e in fix), key=lambda e: (e.start_byte, e.end_byte)))
    fixed = sum(users[fix] for fix in kept)
    return FixPlan(edits, fixed, sum(users[fixes[i]] for i in clashing))


def apply(source: bytes, edits: Iterable[TextEdit]) -> bytes:
    """`source` with disjoint `edits` made (byte offsets into the original text)."""
    out = source
    for e in sorted(edits, key=lambda e: (e.start_byte, e.end_byte), reverse=True):
        out = out[: e.start_byte] + e.new_text.encode("utf-8") + out[e.end_byte :]
    return out


def unified_diff(display: str, before: bytes, after: bytes) -> str:
    """A unified diff as `patch -p0` and ruff's `--diff` print it (the path on both header lines)."""
    old = before.decode("utf-8").splitlines(keepends=True)
    new = after.decode("utf-8").splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, fromfile=display, tofile=display))
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def write_if_unchanged(path: Path, checked: bytes, fixed: bytes) -> None:
    """Replace `path` by `fixed` (atomically, mode kept) if it still holds `checked`."""
    try:
        current = path.read_bytes()
    except OSError as exc:
        raise FileChanged(f"cannot read it again: {exc.strerror or exc}") from exc
    if current != checked:
        raise FileChanged("it changed while it was being checked")
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".argus-fix", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(fixed)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
