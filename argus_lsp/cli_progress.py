"""`argus check` on big inputs: progress on stderr, and results written file by file.

A 5 MB file of ten thousand kernels, or a repository of thousands of files, takes a while; a
person watching must see that it moves, and a pipe reading the report should get each file's
findings as soon as that file is done, not all at the end. Both are built here, apart from the
checking itself.

Progress goes to stderr only (stdout stays the report): one line per checked file, and inside a
file with many kernels one line every `KERNEL_STEP` kernels. It is on when stderr is a terminal,
or with `--progress`; `--no-progress` turns it off.

Streaming applies to the text formats written to stdout (`concise`, `full`): each file's findings
are printed when it is done and the summary line last, byte for byte what the whole report would
have printed. The other formats (json, sarif, ...) are one document and are written at the end.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from argus.analyzers import KernelCache

from argus_lsp.render import Report
from argus_lsp.render.text import _Paint, render_concise_diagnostic, render_diagnostic, summary_line

KERNEL_STEP = 500  # a progress line every this many kernels inside one file
STREAMED = ("concise", "text", "full")


def add_progress_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress lines on stderr (default: when stderr is a terminal)",
    )


def progress_wanted(args: argparse.Namespace, stderr: TextIO) -> bool:
    if args.progress is not None:
        return bool(args.progress)
    return stderr.isatty()


class ProgressCache(KernelCache):
    """The checker's own per-kernel cache, used for one file: the checker asks it once per kernel
    before analyzing that kernel, which is when progress inside a long file is reported."""

    def __init__(self, display: str, total: int, stderr: TextIO) -> None:
        super().__init__(capacity=16)  # nothing is reused within a run: keep it small
        self.display, self.total, self.stderr = display, total, stderr
        self.seen = 0

    def get(self, key: str) -> Any:
        self.seen += 1
        if self.seen % KERNEL_STEP == 0 and self.seen < self.total:
            print(f"argus: {self.display}: {self.seen}/{self.total} kernels", file=self.stderr, flush=True)
        return super().get(key)


@dataclass
class Progress:
    """Per-file progress lines; `cache_for` gives the per-kernel hook for one file (or None)."""

    enabled: bool
    files: int
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    done: int = 0

    def cache_for(self, display: str, kernels: int) -> KernelCache | None:
        if not self.enabled or kernels < KERNEL_STEP:
            return None
        return ProgressCache(display, kernels, self.stderr)

    def file_done(self, display: str, kernels: int) -> None:
        self.done += 1
        if self.enabled:
            noun = "kernel" if kernels == 1 else "kernels"
            line = f"argus: [{self.done}/{self.files}] {display}: {kernels} {noun}"
            print(line, file=self.stderr, flush=True)


@dataclass
class Stream:
    """Writes the diagnostics of the report not yet written; `tail` is what remains at the end."""

    fmt: str
    color: bool
    out: TextIO = field(default_factory=lambda: sys.stdout)
    written: int = 0

    def flush(self, report: Report) -> None:
        paint = _Paint(self.color)
        for d in report.diagnostics[self.written :]:
            lines = (
                render_diagnostic(d, paint) + [""]
                if self.fmt == "full"
                else render_concise_diagnostic(d, paint)
            )
            self.out.write("\n".join(lines) + "\n")
        self.written = len(report.diagnostics)
        self.out.flush()

    def tail(self, report: Report) -> str:
        self.flush(report)
        gap = "\n" if self.written and self.fmt != "full" else ""
        return gap + summary_line(report.summary) + "\n"
