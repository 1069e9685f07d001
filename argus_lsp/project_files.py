"""The files a check may read besides the one it checks: the modules of the file's package.

`analyzers.project.SourceSet` resolves imports and finds launches over a module table and a read
function; this module builds both from the file system, read-only and bounded:

- the CLI (`argus check PATH...`): every package the checked paths belong to, found by walking
  up from each file while the folder has an `__init__.py`; a file outside any package brings
  the `.py` files of its own folder (scripts that `from kernels import k`);
- the language server: the workspace folder (packages inside it by the same rule, other files
  by their path under the folder), with the open documents' unsaved text in place of the disk.

Only regular files are read (a FIFO named `x.py` is skipped, never opened blocking), files over
`MAX_FILE_BYTES` are left out, a walk stops after `MAX_FILES` files, and hidden folders,
`__pycache__`, `node_modules` and virtual environments are not entered. Nothing is imported or run.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from argus.analyzers.project import SourceSet

from argus_lsp.discover import NotRegular, read_regular

MAX_FILES = 5000  # per walk: a huge workspace is indexed up to here, in a stable order
MAX_FILE_BYTES = 2 * 1024 * 1024  # a larger module is not read (generated tables, vendored code)
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", ".venv", "build", "dist"}


class FileReader:
    """Reads module files for resolution, remembering each by (size, modification time), so a
    check that asks for the same file twice, or the next check, reads it once."""

    def __init__(self, overlay: Callable[[str], bytes | None] | None = None) -> None:
        self._memo: dict[str, tuple[tuple[int, int], bytes | None]] = {}
        self._lock = threading.Lock()
        self.overlay = overlay  # the text an editor holds for a path, when it holds one

    def __call__(self, path: str) -> bytes | None:
        if self.overlay is not None:
            held = self.overlay(path)
            if held is not None:
                return held
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        with self._lock:
            held_memo = self._memo.get(path)
        if held_memo is not None and held_memo[0] == stamp:
            return held_memo[1]
        try:
            data: bytes | None = read_regular(Path(path))
        except (NotRegular, OSError):
            data = None
        if data is not None and len(data) > MAX_FILE_BYTES:
            data = None
        with self._lock:
            self._memo[path] = (stamp, data)
        return data


def package_top(path: Path) -> Path | None:
    """The outermost package folder holding `path` (walking up while `__init__.py` exists)."""
    folder = path.parent
    top = None
    while (folder / "__init__.py").is_file():
        top = folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return top


def _py_files(
    folder: Path, budget: list[int], recursive: bool, folders: dict[str, int] | None = None
) -> Iterator[Path]:
    """`.py` files under `folder` in sorted order, `budget[0]` at most (decremented); each
    folder read, with its modification time, into `folders` when given."""
    try:
        if folders is not None:
            folders[str(folder)] = os.stat(folder).st_mtime_ns
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    subdirs = []
    for e in entries:
        if budget[0] <= 0:
            return
        if e.is_dir(follow_symlinks=False):
            if recursive and not e.name.startswith(".") and e.name not in _SKIP_DIRS:
                subdirs.append(Path(e.path))
        elif e.name.endswith(".py") and e.is_file(follow_symlinks=False):
            budget[0] -= 1
            yield Path(e.path)
    for sub in subdirs:
        yield from _py_files(sub, budget, recursive, folders)


def _module_name(path: Path, base: Path) -> str | None:
    try:
        rel = path.relative_to(base).with_suffix("")
    except ValueError:
        return None
    parts = list(rel.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def modules_for_paths(paths: Iterable[Path], max_files: int = MAX_FILES) -> dict[str, str]:
    """Module name -> path for the packages (or, outside packages, the folders) of `paths`."""
    table: dict[str, str] = {}
    budget = [max_files]
    done: set[Path] = set()
    for p in paths:
        p = Path(os.path.abspath(p))
        top = package_top(p)
        folder, base, recursive = (top, top.parent, True) if top is not None else (p.parent, p.parent, False)
        if folder in done:
            continue
        done.add(folder)
        for f in _py_files(folder, budget, recursive):
            name = _module_name(f, base)
            if name is not None:
                table.setdefault(name, str(f))
    return table


def modules_for_workspace(root: Path, max_files: int = MAX_FILES) -> dict[str, str]:
    """Module name -> path for every `.py` file under the workspace folder: a file inside a
    package by its package name, any other by its dotted path under the folder."""
    return _workspace_table(root, [max_files], None)


def _workspace_table(root: Path, budget: list[int], folders: dict[str, int] | None) -> dict[str, str]:
    """`modules_for_workspace` within `budget` files (decremented), every folder walked put
    in `folders` with its modification time."""
    table: dict[str, str] = {}
    root = Path(os.path.abspath(root))
    tops: dict[Path, Path | None] = {}
    for f in _py_files(root, budget, True, folders):
        if f.parent not in tops:
            tops[f.parent] = package_top(f)
        top = tops[f.parent]
        name = _module_name(f, top.parent if top is not None else root)
        if name is not None:
            table.setdefault(name, str(f))
    return table


def project_for_paths(paths: Iterable[Path], reader: FileReader | None = None) -> SourceSet:
    """The SourceSet `argus check` uses: the packages of the checked files."""
    cwd = os.getcwd()
    return SourceSet(modules_for_paths(paths), reader or FileReader(), lambda p: _shown(p, cwd))


#: a folder modified this close before a walk may change again within the same tick of a
#: coarse file-system clock unseen: such a walk is not trusted to stand for later ones
_SETTLED_NS = 2_000_000_000


def _unchanged(folders: dict[str, int]) -> bool:
    """Whether every folder walked still has the modification time it had then."""
    try:
        return all(os.stat(path).st_mtime_ns == mtime for path, mtime in folders.items())
    except OSError:
        return False


def _shown(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


class WorkspaceSources:
    """The language server's view of its workspace folder for resolution. Walking the folder
    for the module table costs tens of milliseconds on a large package (80 ms of CPU on
    flag-gems' 1,269 modules), too much for every keystroke's check: the table is kept and
    walked again after a save (`invalidate`), and once it is `TABLE_TTL_S` old its folders are
    looked at again, so a module created outside the editor is seen within that time. Looking
    is one `stat` per folder walked (a file created, removed or renamed changes its folder's
    modification time): the walk itself, 20-30 ms on this repository, landed on one keystroke
    in every ten seconds of typing and made it one of the slowest. The folders are walked again
    when one changed, when the walk stopped at `MAX_FILES`, or when a folder's time was too
    close to the walk's own to tell a later change from it (`_SETTLED_NS`). Files are read
    through one shared `FileReader`, and the views of unchanged modules are kept between
    checks."""

    TABLE_TTL_S = 10.0

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.reader = FileReader()
        self._loaded: dict = {}
        self._words: dict = {}
        #: (when walked or last found unchanged, the table, its folders' times or None: walk again)
        self._table: tuple[float, dict[str, str], dict[str, int] | None] | None = None
        self._table_lock = threading.Lock()

    def invalidate(self) -> None:
        """Walk the folder again at the next check (a file was saved, created or deleted)."""
        with self._table_lock:
            self._table = None

    def modules(self) -> dict[str, str]:
        """The module table, looked at again at most once per `TABLE_TTL_S` unless invalidated,
        and walked again only where a folder changed."""
        now = time.monotonic()
        with self._table_lock:
            held = self._table
        if held is not None:
            _, table, folders = held
            if now - held[0] < self.TABLE_TTL_S:
                return table
            if folders is not None and _unchanged(folders):
                with self._table_lock:
                    self._table = (now, table, folders)
                return table
        folders: dict[str, int] = {}
        started = time.time_ns()
        budget = [MAX_FILES]
        table = _workspace_table(self.root, budget, folders)
        settled = budget[0] > 0 and all(started - t > _SETTLED_NS for t in folders.values())
        with self._table_lock:
            self._table = (now, table, folders if settled else None)
        return table

    def for_check(self, open_texts: dict[str, bytes]) -> SourceSet:
        """A SourceSet for one check; `open_texts` (absolute path -> text) are the documents
        open in the editor, whose unsaved text stands in for the file on disk."""

        def read(path: str) -> bytes | None:
            held = open_texts.get(path)
            return held if held is not None else self.reader(path)

        root = str(self.root)
        return SourceSet(
            self.modules(),
            read,
            lambda p: _shown(p, root),
            loaded=self._loaded,
            words=self._words,
        )
