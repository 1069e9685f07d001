"""The machine format of DESIGN.md's CLI contract: one JSON object per run (`version` 1).

Scripts and the agent key on these field names, so they follow the contract exactly; positions
are 1-based with an exclusive end, like every other format.
"""

from __future__ import annotations

import json
from typing import Any

from argus_lsp.render.report import Diagnostic, Range, Report

SCHEMA_VERSION = 1


def _range(r: Range) -> dict[str, int]:
    return {"line": r.line, "column": r.column, "end_line": r.end_line, "end_column": r.end_column}


def diagnostic_object(d: Diagnostic) -> dict[str, Any]:
    fix = None
    if d.fix is not None:
        fix = {
            "title": d.fix.title,
            "edits": [{**_range(e.range), "new_text": e.new_text} for e in d.fix.edits],
        }
    return {
        "path": d.path,
        "kernel": d.kernel,
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        **_range(d.range),
        "message": d.message,
        "witness": d.witness,
        "fix": fix,
    }


def render(report: Report, *, color: bool = False) -> str:
    s = report.summary
    doc = {
        "version": SCHEMA_VERSION,
        "summary": {
            "files": s.files,
            "kernels": s.kernels,
            "errors": s.errors,
            "warnings": s.warnings,
            "hints": s.hints,
            "infos": s.infos,
        },
        "diagnostics": [diagnostic_object(d) for d in report.diagnostics],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
