"""The workspace's launch file, as the language server binds kernels from it.

`argus record` writes the launches a real run made (`.argus/launches.json` by default); the CLI
reads them with `check --launches FILE`, the server reads them by itself: the file the
`argus.launches` setting names (relative to the workspace folder), else the default one when it
exists. Reading it is the CLI's reader (`cli_record.read_launch_file`): JSON is parsed and
validated, nothing in it is ever executed.

The file is re-read when it changes. The server stats it before each analysis (a few
microseconds) and, when the client can watch files, also on `workspace/didChangeWatchedFiles`, so
a recording that finishes while no document is being edited still updates the open documents.
A change bumps the scheduler's generation: every open document is checked again, and the
per-kernel cache keys hold the recorded launches themselves, so only kernels whose launches
changed are analyzed again.

A broken file (bad JSON, a missing field, unreadable, too large) gives one window message per
broken state of the file, and checks go on without any launch file until it is fixed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from argus_lsp.cli_record import DEFAULT_OUT, LaunchFile, RecordedLaunch, read_launch_file, same_file

#: A launch file is a few kilobytes per kernel signature (at most 32 per kernel); past this size
#: something else was written there, and reading it would only cost memory.
MAX_BYTES = 64 * 1024 * 1024

Stamp = tuple[str, int, int]  # (path, mtime_ns, size): what "the file changed" means


@dataclass(frozen=True)
class LaunchSnapshot:
    """One read of the launch file, shared by the jobs that check against it (immutable)."""

    path: str
    launches: LaunchFile

    def for_file(self, path: str) -> dict[str, list[RecordedLaunch]]:
        """Recorded launches of the kernels defined in `path`, by kernel name (as `check
        --launches` binds them)."""
        by_kernel: dict[str, list[RecordedLaunch]] = {}
        for lr in self.launches.launches:
            if same_file(lr.file, path):
                by_kernel.setdefault(lr.kernel, []).append(lr)
        return by_kernel


def _stamp(path: str | None) -> Stamp:
    """(path, mtime_ns, size); (path, -1, -1) when there is no such file."""
    if path is None:
        return ("", -1, -1)
    try:
        st = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, st.st_mtime_ns, st.st_size)


class WorkspaceLaunches:
    """Which launch file applies, its last good read, and the messages about it.

    `warn` shows the user one message (window/showMessage); it is called on the message loop."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self.folder: Path | None = None
        self.setting: str | None = None  # `argus.launches` as the editor sent it
        self.snapshot: LaunchSnapshot | None = None
        self._stamp: Stamp | None = None  # of the file as last read (good, broken or missing)

    def configure(self, folder: Path | None, setting: str | None) -> None:
        self.folder = folder
        self.setting = setting

    def path(self) -> str | None:
        """The launch file that applies: the setting's (relative to the workspace folder), else
        the default one; None without a workspace folder and without an absolute setting."""
        chosen = Path(self.setting).expanduser() if self.setting else DEFAULT_OUT
        if chosen.is_absolute():
            return str(chosen)
        return str(self.folder / chosen) if self.folder is not None else None

    def glob(self) -> str | None:
        """The pattern a client should watch: the file itself, with forward slashes (a glob)."""
        path = self.path()
        return Path(path).as_posix() if path is not None else None

    def refresh(self) -> bool:
        """Re-read the file if it appeared, changed or disappeared; whether the launches changed."""
        path = self.path()
        stamp = _stamp(path)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        before = self.snapshot
        if path is None or stamp[1] < 0:
            self.snapshot = None
            if self.setting and path is not None:  # asked for by name: say it is not there
                self.warn(
                    f"argus: the launch file {path} (setting argus.launches) does not exist; "
                    "kernels are checked without recorded launches"
                )
            return before is not None
        self.snapshot = self._read(path, stamp[2])
        return self.snapshot != before

    def _read(self, path: str, size: int) -> LaunchSnapshot | None:
        if size > MAX_BYTES:
            self.warn(
                f"argus: the launch file {path} is {size // (1024 * 1024)} MiB, more than a recording "
                f"writes ({MAX_BYTES // (1024 * 1024)} MiB at most); it is ignored"
            )
            return None
        try:
            return LaunchSnapshot(path, read_launch_file(path))
        except (ValueError, RecursionError) as exc:  # LaunchFileError, bad JSON, bad UTF-8
            self.warn(
                f"argus: the launch file {path} cannot be used, so kernels are checked without recorded "
                f"launches until it is fixed or recorded again (`argus record -- pytest`): {exc}"
            )
            return None
