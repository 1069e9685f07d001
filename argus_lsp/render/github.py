"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

GitHub parses `::level key=value,...::data` itself, so the only subtle part is escaping: `%`, CR
and LF in the data, and additionally `:` and `,` inside property values (a path or title holding
them would otherwise end the property early).
"""

from __future__ import annotations

from argus.analyzers import Severity

from argus_lsp.render.report import Diagnostic, Report

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic) -> str:
    level = _LEVEL.get(d.severity, "notice")
    props = [f"file={escape_property(d.path)}", f"line={d.line}", f"endLine={d.end_line}"]
    if d.line == d.end_line:  # GitHub rejects columns on an annotation that spans several lines
        props += [f"col={d.column}", f"endColumn={d.end_column}"]
    props.append(f"title={escape_property(f'Argus {d.code} ({d.name})')}")
    message = f"{d.kernel}: {d.message}"
    if d.witness_summary:
        message += f"\nwitness: {d.witness_summary}"
    if d.fix is not None:
        message += f"\nfix: {d.fix.title}"
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(command(d) + "\n" for d in report.diagnostics)
