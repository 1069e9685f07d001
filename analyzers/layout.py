"""Cache keys that ignore trailing whitespace and blank lines, and findings moved across them.

A person typing in a kernel file opens new lines and leaves trailing blanks all the time; neither
changes a token, a line break between tokens or an indentation, so neither changes what the
analysis of a kernel (or of its launcher) can find, only where it is. Each piece of text the
analysis reads is keyed on its *normalized* text: every run of trailing blanks and blank
lines (`[ \\t]*\\n([ \\t]*\\n)*`) replaced by one newline. A run is kept as it is where dropping it could
matter: inside a string literal (its value; a docstring's is never read), and after a backslash
(`\\ ` then a newline is an error, `\\` then a newline a continuation). Carriage returns and form
feeds are never dropped.

The same cut list maps a byte offset of the text the findings were computed on to the normalized
text and back into the current text: rows shift by the blank lines dropped before the offset,
columns stay (a cut ends where a line starts and begins where a line's last token ends). An
offset inside a cut, or a fix that would replace bytes a cut changed, cannot be mapped: the
caller then analyzes the kernel again rather than guess.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from argus.analyzers.findings import Finding, Fix, Related, Span, TextEdit
from argus.analyzers.frontend.text_memo import by_text
from tree_sitter import Node

# a run that drops something: trailing blanks, or at least one blank line (a lone newline stays)
_RUN = re.compile(rb"[ \t]+\n(?:[ \t]*\n)*|\n(?:[ \t]*\n)+")


@dataclass(frozen=True)
class Piece:
    """Where one piece of text sits, and the runs its normalized form drops (relative bytes)."""

    start: int  # byte offset in the file
    end: int
    row: int  # row of `start`
    cuts: tuple[tuple[int, int, int], ...] = ()  # (start, end, newlines) of each dropped run
    # per cut, bytes and rows dropped up to and including it; and its start in normalized bytes
    _dropped: tuple[int, ...] = ()
    _rows: tuple[int, ...] = ()
    _norm_starts: tuple[int, ...] = ()

    def holds(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    def to_norm(self, offset: int) -> tuple[int, int] | None:
        """(normalized offset, rows dropped before it); None inside a cut."""
        rel = offset - self.start
        i = bisect.bisect_left([c[0] for c in self.cuts], rel)  # cuts starting at or after rel
        if i > 0:
            s, e, _ = self.cuts[i - 1]
            if rel < e:
                return None  # strictly inside cut i-1 (rel > s, since cuts before i start < rel)
        dropped = self._dropped[i - 1] if i else 0
        rows = self._rows[i - 1] if i else 0
        return rel - dropped, rows

    def from_norm(self, norm: int) -> tuple[int, int]:
        """(file offset, rows dropped before it) of a normalized offset."""
        i = bisect.bisect_left(self._norm_starts, norm)  # cuts whose replacement starts >= norm
        dropped = self._dropped[i - 1] if i else 0
        rows = self._rows[i - 1] if i else 0
        return self.start + norm + dropped, rows


def piece_of(source: bytes, node: Node) -> tuple[bytes, Piece]:
    """The normalized text of `node` (what the key hashes) and its Piece; the normalization is
    a function of the node's text, kept by it (frontend/text_memo.py: every check keys every
    kernel, and an edit changes one definition)."""
    start, end = node.start_byte, node.end_byte
    norm, relative = by_text("piece", node, lambda: _normalized(source[start:end], node))
    return norm, replace(relative, start=start, end=end, row=node.start_point[0])


def _normalized(text: bytes, node: Node) -> tuple[bytes, Piece]:
    """The normalized text and a Piece whose place (start, end, row) is left for the caller."""
    start = node.start_byte
    cuts: list[tuple[int, int, int]] = []
    for m in _RUN.finditer(text):
        s, e = m.span()
        if (s > 0 and text[s - 1 : s] == b"\\") or _in_string(node, start + s):
            continue
        cuts.append((s, e, text.count(b"\n", s, e)))
    if not cuts:
        return text, Piece(0, 0, 0)
    parts, dropped, rows, norm_starts = [], [], [], []
    at = total = total_rows = 0
    for s, e, nl in cuts:
        parts += [text[at:s], b"\n"]
        norm_starts.append(s - total)
        total += e - s - 1
        total_rows += nl - 1
        dropped.append(total)
        rows.append(total_rows)
        at = e
    parts.append(text[at:])
    return b"".join(parts), Piece(0, 0, 0, tuple(cuts), tuple(dropped), tuple(rows), tuple(norm_starts))


def _in_string(piece: Node, offset: int) -> bool:
    """Whether `offset` is inside a string literal whose value the program can read (a bare
    string statement, a docstring among them, is evaluated and dropped: its blanks are free)."""
    node = piece.descendant_for_byte_range(offset, offset + 1)
    while node is not None and node != piece:
        if node.type == "string":
            statement = node.parent
            return not (
                statement is not None
                and statement.type == "expression_statement"
                and statement.named_child_count == 1
            )
        node = node.parent
    return False


class Unmappable(Exception):
    """A cached finding points where the edit changed bytes: analyze the kernel again."""


def move_findings(findings: list[Finding], old: Sequence[Piece], new: Sequence[Piece]) -> list[Finding]:
    """The cached findings placed in the current text (`old` and `new`: the same pieces, the
    kernel first). Each offset moves with the innermost piece holding the span's start; a span in
    none of them moves with the kernel, as far as the kernel moved. Raises `Unmappable`."""

    def holder(offset: int) -> int | None:
        holding = [i for i, p in enumerate(old) if p.holds(offset)]
        return min(holding, key=lambda i: old[i].end - old[i].start, default=None)

    def offset(i: int, at: int) -> tuple[int, int]:
        """(new offset, row change) of old offset `at` in piece i."""
        mapped = old[i].to_norm(at)
        if mapped is None or not old[i].holds(at):
            raise Unmappable
        norm, rows_before = mapped
        moved, rows_after = new[i].from_norm(norm)
        return moved, new[i].row - old[i].row - rows_before + rows_after

    def span(s: Span) -> Span:
        i = holder(s.start_byte)
        if i is None:
            dbyte, drow = new[0].start - old[0].start, new[0].row - old[0].row
            return Span(
                s.start_byte + dbyte,
                s.end_byte + dbyte,
                (s.start_point[0] + drow, s.start_point[1]),
                (s.end_point[0] + drow, s.end_point[1]),
            )
        (b0, r0), (b1, r1) = offset(i, s.start_byte), offset(i, s.end_byte)
        return Span(b0, b1, (s.start_point[0] + r0, s.start_point[1]), (s.end_point[0] + r1, s.end_point[1]))

    def edit(e: TextEdit) -> TextEdit:
        moved = span(Span(e.start_byte, e.end_byte, (0, 0), (0, 0)))
        if moved.end_byte - moved.start_byte != e.end_byte - e.start_byte:
            raise Unmappable  # the bytes it replaces changed (its new text may quote them)
        i = holder(e.start_byte)
        if i is not None:
            a, b = old[i].to_norm(e.start_byte), old[i].to_norm(e.end_byte)
            if a is None or b is None or b[0] - a[0] != e.end_byte - e.start_byte:
                raise Unmappable
        return TextEdit(moved.start_byte, moved.end_byte, e.new_text)

    if list(old) == list(new):
        return findings
    return remap_findings(findings, span, edit)


def remap_findings(
    findings: list[Finding], span: Callable[[Span], Span], edit: Callable[[TextEdit], TextEdit]
) -> list[Finding]:
    """Every span of each finding (its own, its related ones', its fix's edits) passed through
    `span` and `edit`."""
    out = []
    for f in findings:
        fix = None if f.fix is None else Fix(f.fix.title, tuple(edit(e) for e in f.fix.edits))
        related = tuple(Related(span(r.span), r.message) for r in f.related)
        out.append(replace(f, span=span(f.span), fix=fix, related=related))
    return out
