"""The edge between the analyzers' UTF-8 byte offsets and the client's LSP positions.

Analyzers report tree-sitter spans (byte offsets, rows split on `\\n`). LSP clients count lines
split on `\\n`, `\\r\\n` or `\\r` and columns in the negotiated position encoding: UTF-16 code
units by default (VS Code), UTF-8 bytes when the client offers it (Neovim >= 0.10), or code points.
Every conversion in the server goes through this module, so nothing else needs to know which
encoding is in force.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from argus.analyzers import RULES, Finding, Fix, Severity, Span
from lsprotocol import types

UTF8 = types.PositionEncodingKind.Utf8.value
UTF16 = types.PositionEncodingKind.Utf16.value
UTF32 = types.PositionEncodingKind.Utf32.value

_EOL = re.compile(rb"\r\n|\r|\n")

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def _decode(data: bytes) -> str:
    """Decode a slice of document bytes; lone surrogates a client sent survive the round trip."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def decode(data: bytes) -> str:
    """The client string for document bytes (the inverse of `encode`)."""
    return _decode(data)


def encode(text: str) -> bytes:
    """The document's bytes for a client string (the inverse of `_decode`)."""
    return text.encode("utf-8", "surrogatepass")


def units(text: str, encoding: str) -> int:
    """Length of `text` in the code units of `encoding`."""
    if text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(encode(text))
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Line starts of one document text, for conversions in both directions."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in _EOL.finditer(source)]

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def line_end(self, line: int) -> int:
        """Byte offset of the end of `line`'s content (before its line break)."""
        if line + 1 >= len(self.starts):
            return len(self.source)
        end = self.starts[line + 1]
        if self.source[end - 2 : end] == b"\r\n":
            return end - 2
        return end - 1

    def line_text(self, line: int) -> bytes:
        return self.source[self.starts[line] : self.line_end(line)]

    def position(self, offset: int, encoding: str) -> types.Position:
        """LSP position of a byte offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.source)))
        line = self.line_of(offset)
        start = self.starts[line]
        offset = min(offset, max(start, self.line_end(line)))  # inside a "\r\n": at the line's end
        prefix = self.source[start:offset]
        if encoding == UTF8 or prefix.isascii():
            return types.Position(line=line, character=len(prefix))
        return types.Position(line=line, character=units(_decode(prefix), encoding))

    def offset(self, position: types.Position, encoding: str) -> int:
        """Byte offset of an LSP position; a column past the line's end means the end (LSP rule)."""
        if position.line >= len(self.starts):
            return len(self.source)
        start = self.starts[max(position.line, 0)]
        content = self.line_text(max(position.line, 0))
        want = max(position.character, 0)
        if content.isascii():
            return start + min(want, len(content))
        if encoding == UTF8:
            pos = min(want, len(content))
            while 0 < pos < len(content) and 0x80 <= content[pos] < 0xC0:  # back to a character start
                pos -= 1
            return start + pos
        count = 0
        taken = 0
        for ch in _decode(content):
            step = units(ch, encoding)
            if count + step > want:
                break
            count += step
            taken += len(encode(ch))
        return start + taken

    def range(self, start: int, end: int, encoding: str) -> types.Range:
        return types.Range(start=self.position(start, encoding), end=self.position(end, encoding))

    def span_range(self, span: Span, encoding: str) -> types.Range:
        return self.range(span.start_byte, span.end_byte, encoding)


def ts_point(source: bytes, offset: int) -> tuple[int, int]:
    """tree-sitter's (row, byte column) of a byte offset: rows split on `\\n` only."""
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)


def severity_of(finding: Finding, overrides: dict[str, str]) -> types.DiagnosticSeverity | None:
    """The severity to show, after the user's overrides (longest matching code prefix); None = off."""
    best = ""
    for prefix in overrides:
        if finding.code.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    level = overrides[best] if best else finding.severity.value
    if level == "off":
        return None
    return SEVERITY[Severity(level)]


def text_edits(fix: Fix, index: LineIndex, encoding: str) -> list[types.TextEdit]:
    return [
        types.TextEdit(range=index.range(e.start_byte, e.end_byte, encoding), new_text=e.new_text)
        for e in fix.edits
    ]


def _range_json(r: types.Range) -> dict:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def diagnostic(
    finding: Finding,
    index: LineIndex,
    uri: str,
    encoding: str,
    version: int,
    severity: types.DiagnosticSeverity,
) -> types.Diagnostic:
    """One finding as an LSP diagnostic; `data` carries the fix so a code action needs no re-run."""
    rng = index.span_range(finding.span, encoding)
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=index.span_range(r.span, encoding)), message=r.message
        )
        for r in finding.related
    ]
    summary = (finding.witness or {}).get("summary")
    if summary:
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=rng), message=f"witness: {summary}"
            )
        )
    data: dict = {"code": finding.code, "kernel": finding.kernel, "version": version}
    if finding.witness:
        data["witness"] = finding.witness
    if finding.fix is not None:
        data["fix"] = {
            "title": finding.fix.title,
            "edits": [
                {"range": _range_json(e.range), "newText": e.new_text}
                for e in text_edits(finding.fix, index, encoding)
            ],
        }
    info = RULES.get(finding.code)
    return types.Diagnostic(
        range=rng,
        message=finding.message,
        severity=severity,
        code=finding.code,
        code_description=types.CodeDescription(href=info.docs_url) if info else None,
        source="argus",
        related_information=related or None,
        data=data,
    )


def diagnostics(
    findings: list[Finding], source: bytes, uri: str, encoding: str, version: int, overrides: dict[str, str]
) -> list[types.Diagnostic]:
    index = LineIndex(source)
    out = []
    for f in findings:
        sev = severity_of(f, overrides)
        if sev is not None:
            out.append(diagnostic(f, index, uri, encoding, version, sev))
    return out


def edit_from_json(item: dict) -> types.TextEdit:
    """A fix edit as `diagnostic` stored it in `data` (clients hand `data` back verbatim)."""
    r = item["range"]
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=r["start"]["line"], character=r["start"]["character"]),
            end=types.Position(line=r["end"]["line"], character=r["end"]["character"]),
        ),
        new_text=item["newText"],
    )
