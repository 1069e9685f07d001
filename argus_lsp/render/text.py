"""The human formats: `concise` (the default) and `full`, both led by ruff-like lines.

Each finding leads with `path:line:col:` so terminals and editors make it a link. `concise` adds
only the witness, on one indented line, because a kernel bug is only convincing with concrete
sizes, program id and element; `full` (`--verbose`) adds the code frame, every witness key,
related places and the quick fix's title.
"""

from __future__ import annotations

from typing import Any

from argus.analyzers import Severity

from argus_lsp.render.report import Diagnostic, Report, Summary

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_SEVERITY_COLOUR = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.HINT: "\x1b[1;36m",
    Severity.INFO: "\x1b[1;34m",
}


class _Paint:
    """Wraps text in ANSI colours only when colour was asked for (a TTY without NO_COLOR)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.enabled and style else text


def _value(value: Any) -> str:
    """Witness values as a person writes them: tuples and lists in parentheses, the rest plainly."""
    if isinstance(value, list | tuple):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _caret_line(d: Diagnostic) -> str:
    """Spaces (tabs kept as tabs, so the carets line up) then one caret per character of the span."""
    line = d.source_line
    start = max(0, min(d.column - 1, len(line)))
    pad = "".join("\t" if ch == "\t" else " " for ch in line[:start])
    end = d.end_column - 1 if d.end_line == d.line else len(line)
    return pad + "^" * max(1, end - start)


def _frame(d: Diagnostic, paint: _Paint) -> list[str]:
    gutter = str(d.line)
    blank = " " * len(gutter)
    colour = _SEVERITY_COLOUR[d.severity]
    carets = _caret_line(d)
    if d.end_line > d.line:
        carets += f" (to line {d.end_line})"
    return [
        f"  {paint(gutter, _DIM)} | {d.source_line}",
        f"  {blank} | {paint(carets, colour)}",
    ]


def _head(d: Diagnostic, paint: _Paint) -> str:
    return (
        f"{paint(f'{d.path}:{d.line}:{d.column}:', _BOLD)} {paint(d.code, _SEVERITY_COLOUR[d.severity])} "
        f"[{d.severity.value}] {d.name} in {d.kernel}: {d.message}"
    )


def witness_line(d: Diagnostic) -> str | None:
    """The witness on one line: its summary, else its keys (`M=16, pid=(0, 0)`)."""
    if not d.witness:
        return None
    summary = d.witness_summary
    if summary:
        return summary
    return ", ".join(f"{key}={_value(val)}" for key, val in d.witness.items() if key != "summary")


def render_concise_diagnostic(d: Diagnostic, paint: _Paint | None = None) -> list[str]:
    paint = paint or _Paint(False)
    witness = witness_line(d)
    return [_head(d, paint)] + ([f"  witness: {witness}"] if witness else [])


def render_diagnostic(d: Diagnostic, paint: _Paint | None = None) -> list[str]:
    """The full block: head, code frame, every witness key, related places, the fix's title."""
    paint = paint or _Paint(False)
    out = [_head(d, paint), *_frame(d, paint)]
    if d.witness:
        summary = d.witness_summary
        out.append(f"  witness: {summary}" if summary else "  witness:")
        out += [f"    {key}={_value(val)}" for key, val in d.witness.items() if key != "summary"]
    for rel in d.related:
        out.append(f"  related: {d.path}:{rel.range.line}:{rel.range.column}: {rel.message}")
    if d.fix is not None:
        out.append(f"  fix: {d.fix.title}")
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(summary: Summary) -> str:
    fixed = f"Fixed {_plural(summary.fixed, 'problem')}. " if summary.fixed else ""
    return fixed + _found_line(summary) + _fixable_note(summary)


def _fixable_note(summary: Summary) -> str:
    return f" {summary.fixable} fixable with `argus check --fix`." if summary.fixable else ""


def _found_line(summary: Summary) -> str:
    checked = f"{_plural(summary.kernels, 'kernel')} in {_plural(summary.files, 'file')}"
    if summary.problems == 0:
        if summary.kernels == 0:
            return "No Triton kernels found."
        return f"All checks passed: {checked}."
    parts = [
        _plural(n, word)
        for n, word in (
            (summary.errors, "error"),
            (summary.warnings, "warning"),
            (summary.hints, "hint"),
            (summary.infos, "info"),
        )
        if n
    ]
    return f"Found {_plural(summary.problems, 'problem')} ({', '.join(parts)}); checked {checked}."


def render_full(report: Report, *, color: bool = False) -> str:
    paint = _Paint(color)
    out: list[str] = []
    for d in report.diagnostics:
        out += render_diagnostic(d, paint)
        out.append("")
    out.append(summary_line(report.summary))
    return "\n".join(out) + "\n"


def render_concise(report: Report, *, color: bool = False) -> str:
    paint = _Paint(color)
    out: list[str] = []
    for d in report.diagnostics:
        out += render_concise_diagnostic(d, paint)
    if out:
        out.append("")
    out.append(summary_line(report.summary))
    return "\n".join(out) + "\n"


render = render_concise
