"""Which files `argus check` reads: the paths given, `*.py` files under given folders, and stdin.

A repository holds far more Python than kernels, so a file is only parsed when its bytes mention
`triton` (every `@triton.jit` kernel's module does); virtual environments, VCS metadata and caches
are never walked, since they hold thousands of files and never the user's kernels.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        "node_modules",
        "__pycache__",
        "__pypackages__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
    }
)
MARKER = b"triton"
STDIN = "-"  # the path that means "read the text from standard input", as ruff and black spell it


@dataclass(frozen=True)
class Candidate:
    """A file to check: `display` is the path as the user will see it, `path` where it is on disk."""

    display: str
    path: Path  # for stdin: the --stdin-filename (or "-"), whose folder finds the configuration
    from_stdin: bool = False


def missing_paths(paths: list[str]) -> list[str]:
    return [p for p in paths if p != STDIN and not os.path.lexists(p)]


def _join(root: str, rel: str) -> str:
    """`root` as the user typed it joined with a path found under it (no `./` prefix for `.`)."""
    if os.path.normpath(root) == ".":
        return rel
    return os.path.join(root, rel)


def _walk(root: str) -> Iterator[Candidate]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                yield Candidate(_join(root, os.path.relpath(full, root)), Path(full))


def _stdin(stdin_filename: str | None) -> Candidate:
    name = stdin_filename or STDIN
    return Candidate(name, Path(name), from_stdin=True)


def candidates(paths: list[str], stdin_filename: str | None = None) -> Iterator[Candidate]:
    """Files in the order given (folders walked in sorted order); a file reached twice comes once.

    A file named explicitly is checked whatever its extension (pre-commit passes scripts with a
    Python shebang too); folders contribute only `*.py` files; `-` is standard input, read once.
    Paths that do not exist are left out (the caller reports them)."""
    seen: set[Path] = set()
    stdin_done = False
    for given in paths:
        if given == STDIN:
            if not stdin_done:
                stdin_done = True
                yield _stdin(stdin_filename)
            continue
        if not os.path.lexists(given):
            continue
        found = _walk(given) if os.path.isdir(given) else iter([Candidate(given, Path(given))])
        for cand in found:
            key = cand.path.resolve()
            if key not in seen:
                seen.add(key)
                yield cand


def mentions_triton(data: bytes) -> bool:
    return MARKER in data
