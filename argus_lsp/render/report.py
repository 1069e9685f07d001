"""The one model every output format reads: findings placed in files, positions made human.

The analyzers speak UTF-8 byte offsets and 0-based (row, byte column) points; people, GitHub and
SARIF viewers count 1-based lines and 1-based character columns with an exclusive end. The
conversion happens once, here, so each renderer only knows its own format's quirks.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers import Finding, Severity


class LineIndex:
    """Maps byte offsets and byte columns of one source text to 1-based lines and character columns."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0]
        for i, byte in enumerate(source):
            if byte == 0x0A:
                self.starts.append(i + 1)

    def line_bytes(self, row: int) -> bytes:
        """The bytes of 0-based line `row`, without its line break."""
        if row < 0 or row >= len(self.starts):
            return b""
        end = self.starts[row + 1] - 1 if row + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[row] : end].rstrip(b"\r")

    def line_text(self, row: int) -> str:
        return self.line_bytes(row).decode("utf-8", errors="replace")

    def char_column(self, row: int, byte_col: int) -> int:
        """1-based character column of a byte column (a column past the line's end stays past it)."""
        line = self.line_bytes(row)
        head = line[:byte_col].decode("utf-8", errors="replace")
        return len(head) + 1 + max(0, byte_col - len(line))

    def point(self, offset: int) -> tuple[int, int]:
        """0-based (row, byte column) of a byte offset."""
        offset = max(0, min(offset, len(self.source)))
        row = bisect_right(self.starts, offset) - 1
        return row, offset - self.starts[row]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, character column) of a byte offset."""
        row, col = self.point(offset)
        return row + 1, self.char_column(row, col)


@dataclass(frozen=True)
class Range:
    """1-based lines and character columns; the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Edit:
    range: Range
    new_text: str


@dataclass(frozen=True)
class FixView:
    title: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class RelatedView:
    range: Range
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding as every format shows it: where, what, the witness, the fix."""

    path: str
    kernel: str
    code: str
    name: str
    severity: Severity
    range: Range
    message: str
    witness: dict[str, Any] | None
    fix: FixView | None
    related: tuple[RelatedView, ...]
    source_line: str  # the text of `range.line`, for code frames

    @property
    def line(self) -> int:
        return self.range.line

    @property
    def column(self) -> int:
        return self.range.column

    @property
    def end_line(self) -> int:
        return self.range.end_line

    @property
    def end_column(self) -> int:
        return self.range.end_column

    @property
    def witness_summary(self) -> str | None:
        if not self.witness:
            return None
        summary = self.witness.get("summary")
        return str(summary) if summary is not None else None


@dataclass
class Summary:
    files: int = 0
    kernels: int = 0
    errors: int = 0
    warnings: int = 0
    hints: int = 0
    infos: int = 0
    fixable: int = 0  # findings with a quick fix that `--fix` would apply
    fixed: int = 0  # findings `--fix` fixed (they are no longer in the report)

    def count(self, severity: Severity) -> None:
        attr = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.HINT: "hints"}
        name = attr.get(severity, "infos")
        setattr(self, name, getattr(self, name) + 1)

    @property
    def problems(self) -> int:
        return self.errors + self.warnings + self.hints + self.infos


@dataclass
class Report:
    """Everything one `argus check` run found, in the order the files were given."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)
    tool_version: str = "0"

    def add_file(
        self, path: str, source: bytes, kernels: int, findings: list[Finding], fixable: int = 0
    ) -> None:
        """Account for one checked file: its kernels and its findings, converted to 1-based positions."""
        if kernels or findings:
            self.summary.files += 1
        self.summary.kernels += kernels
        self.summary.fixable += fixable
        index = LineIndex(source)
        for finding in findings:
            self.summary.count(finding.severity)
            self.diagnostics.append(to_diagnostic(path, index, finding))

    @property
    def failed(self) -> bool:
        """True when a finding should fail a CI gate (errors and warnings do; hints and info never)."""
        return any(d.severity.fails_check for d in self.diagnostics)


def _range_of_points(index: LineIndex, start: tuple[int, int], end: tuple[int, int]) -> Range:
    return Range(
        start[0] + 1,
        index.char_column(start[0], start[1]),
        end[0] + 1,
        index.char_column(end[0], end[1]),
    )


def _range_of_bytes(index: LineIndex, start: int, end: int) -> Range:
    return _range_of_points(index, index.point(start), index.point(end))


def to_diagnostic(path: str, index: LineIndex, finding: Finding) -> Diagnostic:
    span = finding.span
    fix = None
    if finding.fix is not None:
        edits = tuple(
            Edit(_range_of_bytes(index, e.start_byte, e.end_byte), e.new_text) for e in finding.fix.edits
        )
        fix = FixView(finding.fix.title, edits)
    related = tuple(
        RelatedView(_range_of_points(index, r.span.start_point, r.span.end_point), r.message)
        for r in finding.related
    )
    return Diagnostic(
        path=path,
        kernel=finding.kernel,
        code=finding.code,
        name=finding.name,
        severity=Severity(finding.severity),
        range=_range_of_points(index, span.start_point, span.end_point),
        message=finding.message,
        witness=dict(finding.witness) if finding.witness else None,
        fix=fix,
        related=related,
        source_line=index.line_text(span.start_point[0]),
    )
