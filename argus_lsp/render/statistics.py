"""`argus check --statistics`: how often each code was found, instead of the findings themselves.

Sorted by count, then code, as ruff prints its statistics; `fixable` counts the findings a
`--fix` run would fix, so a team can see what a cleanup would cost before running it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from argus_lsp.render.report import Report
from argus_lsp.render.text import summary_line


@dataclass(frozen=True)
class CodeCount:
    code: str
    name: str
    count: int
    fixable: int


def counts(report: Report) -> list[CodeCount]:
    by_code: dict[str, list] = {}
    for d in report.diagnostics:
        entry = by_code.setdefault(d.code, [d.name, 0, 0])
        entry[1] += 1
        entry[2] += d.fix is not None
    rows = [CodeCount(code, name, n, fixable) for code, (name, n, fixable) in by_code.items()]
    return sorted(rows, key=lambda r: (-r.count, r.code))


def render_text(report: Report, *, color: bool = False) -> str:
    rows = counts(report)
    width = max((len(str(r.count)) for r in rows), default=1)
    lines = [
        f"{r.count:>{width}}  {r.code}  {r.name}" + (f" ({r.fixable} fixable)" if r.fixable else "")
        for r in rows
    ]
    return "\n".join([*lines, summary_line(report.summary)]) + "\n"


def render_json(report: Report, *, color: bool = False) -> str:
    doc = [{"code": r.code, "name": r.name, "count": r.count, "fixable": r.fixable} for r in counts(report)]
    return json.dumps(doc, indent=2) + "\n"
