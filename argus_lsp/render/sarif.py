"""SARIF 2.1.0, the format GitHub code scanning uploads (`github/codeql-action/upload-sarif`).

Only the rules that occur are listed, each with its whole documentation page as help, so a code
scanning alert explains itself. URIs are relative with forward slashes, as code scanning resolves
them against the repository root; columns count Unicode code points (`columnKind`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from argus.analyzers import RULES, Severity

from argus_lsp.render.report import Diagnostic, Range, Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/argus-kernels/argus"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.HINT: "note", Severity.INFO: "note"}


def artifact_uri(path: str) -> str:
    """A relative, forward-slash, percent-encoded URI; a file outside the working dir gets file://."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return p.resolve().as_uri()
    posix = PurePosixPath(*Path(os.path.normpath(p)).parts).as_posix()
    return quote(posix, safe="/")


def _region(r: Range) -> dict[str, int]:
    return {"startLine": r.line, "startColumn": r.column, "endLine": r.end_line, "endColumn": r.end_column}


def _rule_object(code: str, example: Diagnostic) -> dict[str, Any]:
    info = RULES.get(code)
    if info is None:  # a code the catalogue does not know yet: still report it, with what we have
        return {
            "id": code,
            "name": example.name,
            "shortDescription": {"text": example.name},
            "defaultConfiguration": {"level": _LEVEL[example.severity]},
        }
    return {
        "id": code,
        "name": info.name,
        "shortDescription": {"text": info.name},
        "fullDescription": {"text": info.summary},
        "help": {"text": info.markdown(), "markdown": info.markdown()},
        "helpUri": info.docs_url,
        "defaultConfiguration": {"level": _LEVEL[Severity(info.severity)]},
    }


def _message(d: Diagnostic) -> str:
    text = f"{d.kernel}: {d.message}"
    if d.witness_summary:
        text += f" Witness: {d.witness_summary}"
    return text


def _result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    uri = artifact_uri(d.path)
    location = {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": _region(d.range)}}
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _LEVEL[d.severity],
        "message": {"text": _message(d)},
        "locations": [location],
        "properties": {"kernel": d.kernel, "witness": d.witness},
    }
    if d.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {"artifactLocation": {"uri": uri}, "region": _region(r.range)},
                "message": {"text": r.message},
            }
            for i, r in enumerate(d.related)
        ]
    if d.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": d.fix.title},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": uri},
                        "replacements": [
                            {"deletedRegion": _region(e.range), "insertedContent": {"text": e.new_text}}
                            for e in d.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def sarif_log(report: Report) -> dict[str, Any]:
    first = {}
    for d in report.diagnostics:
        first.setdefault(d.code, d)
    codes = sorted(first)
    index = {code: i for i, code in enumerate(codes)}
    results = [_result(d, index[d.code]) for d in report.diagnostics]
    driver = {
        "name": "Argus",
        "informationUri": INFORMATION_URI,
        "version": report.tool_version,
        "rules": [_rule_object(code, first[code]) for code in codes],
    }
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }


def render(report: Report, *, color: bool = False) -> str:
    return json.dumps(sarif_log(report), indent=2, ensure_ascii=False, default=str) + "\n"
