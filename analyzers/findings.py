"""The checker's output model: what every consumer (CLI, server, agent) reads.

Positions are tree-sitter's: UTF-8 byte offsets into the source plus 0-based (row, byte column)
points. Only the consumers convert them (1-based lines and character columns for the CLI, UTF-16
for VS Code), so the analyzers never have to know who is asking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    HINT = "hint"
    INFO = "info"

    @property
    def fails_check(self) -> bool:
        """Errors and warnings make `argus check` exit 1; hints and info never do."""
        return self in (Severity.ERROR, Severity.WARNING)


@dataclass(frozen=True)
class Span:
    """A half-open byte range [start_byte, end_byte) with its tree-sitter points (0-based)."""

    start_byte: int
    end_byte: int
    start_point: tuple[int, int]  # (row, byte column)
    end_point: tuple[int, int]

    @property
    def line(self) -> int:
        """1-based first line, as people and CLIs count."""
        return self.start_point[0] + 1


@dataclass(frozen=True)
class TextEdit:
    """Replace source bytes [start_byte, end_byte) by `new_text`."""

    start_byte: int
    end_byte: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: a title for the editor's menu and the edits that make it."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class Related:
    """A second place that explains a finding (the load, store or dot where two tags met)."""

    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    """One violated invariant in one kernel.

    `witness` is a flat JSON-able dict of concrete facts a person can check by hand (sizes, program
    id, element, the two tags that met) plus a one-line `summary`; None when the rule has no
    concrete instance, in which case the message says why.
    """

    code: str
    name: str
    severity: Severity
    kernel: str
    span: Span
    message: str
    witness: dict[str, Any] | None = None
    fix: Fix | None = None
    related: tuple[Related, ...] = field(default_factory=tuple)

    @property
    def line(self) -> int:
        return self.span.line

    def sort_key(self) -> tuple[int, int, str]:
        return (self.span.start_byte, self.span.end_byte, self.code)
