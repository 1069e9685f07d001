"""Which files `argus check` reads: the paths given, `*.py` files under given folders, and stdin.

Only regular files are read: a FIFO, socket or device named `x.py` (or met in a walked folder)
would block the read or never end, so it is left out and named on stderr ("not a regular file").
The read itself re-checks this on the opened descriptor, so a file swapped for a FIFO between
the walk and the read cannot block it either.

A repository holds far more Python than kernels, so a file is only parsed when its bytes mention
`triton` (every `@triton.jit` kernel's module does); virtual environments, VCS metadata and caches
are never walked, since they hold thousands of files and never the user's kernels.
"""

from __future__ import annotations

import os
import stat
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


class NotRegular(OSError):
    """The path is a FIFO, socket or device: reading it could block for ever."""


def kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_regular_message(display: str, mode: int) -> str:
    return f"skipping {display}: {kind_of(mode)}, not a regular file (argus reads regular files only)"


def irregular(path: str) -> int | None:
    """The st_mode of an existing path that is neither a folder nor a regular file, else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing or unreadable: reported where it is read
    return None if stat.S_ISDIR(mode) or stat.S_ISREG(mode) else mode


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file; `NotRegular` for anything else, checked on the opened
    descriptor (opened non-blocking, so opening a FIFO with no writer does not wait either)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(f"{kind_of(mode)}, not a regular file (argus reads regular files only)")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _walk(root: str, skipped: list[str] | None) -> Iterator[Candidate]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                display = _join(root, os.path.relpath(full, root))
                mode = irregular(full)
                if mode is not None:
                    if skipped is not None:
                        skipped.append(not_regular_message(display, mode))
                    continue
                yield Candidate(display, Path(full))


def _stdin(stdin_filename: str | None) -> Candidate:
    name = stdin_filename or STDIN
    return Candidate(name, Path(name), from_stdin=True)


def candidates(
    paths: list[str], stdin_filename: str | None = None, skipped: list[str] | None = None
) -> Iterator[Candidate]:
    """Files in the order given (folders walked in sorted order); a file reached twice comes once.

    A file named explicitly is checked whatever its extension (pre-commit passes scripts with a
    Python shebang too); folders contribute only `*.py` files; `-` is standard input, read once.
    Paths that do not exist are left out (the caller reports them); FIFOs, sockets and devices
    are left out with a message appended to `skipped`."""
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
        mode = irregular(given)
        if mode is not None:
            if skipped is not None:
                skipped.append(not_regular_message(given, mode))
            continue
        found = _walk(given, skipped) if os.path.isdir(given) else iter([Candidate(given, Path(given))])
        for cand in found:
            key = cand.path.resolve()
            if key not in seen:
                seen.add(key)
                yield cand


def mentions_triton(data: bytes) -> bool:
    return MARKER in data
