"""GitLab's Code Quality report (`artifacts: reports: codequality`), shown on merge requests.

GitLab keys a finding on its `fingerprint` to tell new findings from fixed ones between the
pipelines of a merge request, so the fingerprint must survive unrelated edits: it hashes the path,
code, kernel, message and the text of the finding's line (never its line number), with a counter
for findings that would otherwise share one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path, PurePosixPath

from argus.analyzers import Severity

from argus_lsp.render.report import Diagnostic, Report

_SEVERITY = {
    Severity.ERROR: "critical",
    Severity.WARNING: "major",
    Severity.HINT: "minor",
    Severity.INFO: "info",
}


def repo_path(path: str) -> str:
    """The path relative to the current folder (the repository root in CI), with forward slashes."""
    p = Path(path)
    if p.is_absolute():
        with contextlib.suppress(ValueError):  # outside the current folder: keep it absolute
            p = p.resolve().relative_to(Path.cwd().resolve())
    return PurePosixPath(*Path(os.path.normpath(p)).parts).as_posix()


def _fingerprint(d: Diagnostic, seen: dict[str, int]) -> str:
    base = "\0".join((repo_path(d.path), d.code, d.kernel, d.message, d.source_line.strip()))
    n = seen.get(base, 0)
    seen[base] = n + 1
    return hashlib.sha256(f"{base}\0{n}".encode()).hexdigest()


def render(report: Report, *, color: bool = False) -> str:
    seen: dict[str, int] = {}
    issues = [
        {
            "description": f"{d.code} {d.name} in {d.kernel}: {d.message}",
            "check_name": d.code,
            "fingerprint": _fingerprint(d, seen),
            "severity": _SEVERITY[d.severity],
            "location": {"path": repo_path(d.path), "lines": {"begin": d.line, "end": d.end_line}},
        }
        for d in report.diagnostics
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
