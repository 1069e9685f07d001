"""`# argus: ignore[CODE, ...]` on a line silences those codes on that line (`# argus: ignore`
alone silences every code there). Comments never change how Triton compiles the kernel."""

from __future__ import annotations

import re

from argus.analyzers.findings import Finding

IGNORE = re.compile(r"#\s*argus:\s*ignore(?:\[([A-Z0-9,\s]*)\])?", re.I)


def suppressed_lines(source: bytes) -> dict[int, set[str] | None]:
    """0-based row -> codes silenced there (None means all codes)."""
    out: dict[int, set[str] | None] = {}
    for row, line in enumerate(source.decode("utf-8", errors="replace").split("\n")):
        if "argus" not in line:
            continue
        for m in IGNORE.finditer(line):
            if m.group(1) is None:
                out[row] = None
            elif out.get(row, set()) is not None:
                codes = {c.strip().upper() for c in m.group(1).split(",") if c.strip()}
                out[row] = (out.get(row) or set()) | codes
    return out


def apply_suppressions(source: bytes, findings: list[Finding]) -> list[Finding]:
    lines = suppressed_lines(source)
    if not lines:
        return findings
    kept = []
    for f in findings:
        row = f.span.start_point[0]
        codes = lines.get(row, set())
        if row in lines and (codes is None or any(f.code.startswith(c) for c in codes)):
            continue
        kept.append(f)
    return kept
