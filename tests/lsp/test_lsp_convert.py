"""Unit tests: byte offsets <-> LSP positions in UTF-16, UTF-8 and UTF-32, and Finding -> Diagnostic."""

from __future__ import annotations

import pytest
from argus.analyzers import Finding, Fix, Related, Severity, Span, TextEdit
from hypothesis import given
from hypothesis import strategies as st
from lsp_support import index_of, position_of
from lsprotocol import types

from argus_lsp import convert
from argus_lsp.convert import UTF8, UTF16, UTF32, LineIndex

TEXT = "x = 1\n# é and 🎉 here\ny = z  # end\r\nlast"
ENCODINGS = [UTF8, UTF16, UTF32]


def pos(line: int, char: int) -> types.Position:
    return types.Position(line=line, character=char)


def byte(text: str, s: str) -> int:
    return text.encode().index(s.encode())


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [(UTF16, 11), (UTF8, 14), (UTF32, 10)],  # "# é and 🎉 " then "here"
)
def test_column_after_non_ascii(encoding: str, expected: int) -> None:
    index = LineIndex(TEXT.encode())
    assert index.position(byte(TEXT, "here"), encoding) == pos(1, expected)
    assert index.offset(pos(1, expected), encoding) == byte(TEXT, "here")


def test_crlf_is_one_line_break() -> None:
    index = LineIndex(TEXT.encode())
    assert index.position(byte(TEXT, "last"), UTF16) == pos(3, 0)
    assert index.position(byte(TEXT, "\r\n") + 1, UTF16) == pos(2, 12)  # between \r and \n: line end
    assert index.line_text(2) == b"y = z  # end"


def test_columns_past_the_end_clamp_to_the_line() -> None:
    index = LineIndex(TEXT.encode())
    assert index.offset(pos(0, 99), UTF16) == 5
    assert index.offset(pos(99, 0), UTF16) == len(TEXT.encode())


def test_position_inside_a_surrogate_pair_goes_to_its_start() -> None:
    index = LineIndex(TEXT.encode())
    emoji = byte(TEXT, "🎉")
    start = index.position(emoji, UTF16).character
    assert index.offset(pos(1, start + 1), UTF16) == emoji
    assert index.offset(pos(1, index.position(emoji, UTF8).character + 2), UTF8) == emoji


@given(st.text(alphabet=st.sampled_from(list("ab \n\r\té🎉ß中")), max_size=40), st.data())
def test_round_trip_matches_the_spec(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text)))
    if 0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n":
        i -= 1  # no position lies between \r and \n
    source = text.encode()
    offset = len(text[:i].encode())
    for enc in ENCODINGS:
        p = LineIndex(source).position(offset, enc)
        assert p == position_of(text, i, enc)
        assert LineIndex(source).offset(p, enc) == offset
        assert index_of(text, p, enc) == i


def test_ts_point_counts_newlines_only() -> None:
    src = "a\r\nbé\nc".encode()
    assert convert.ts_point(src, src.index(b"c")) == (2, 0)
    assert convert.ts_point(src, len(b"a\r\nb") + 2) == (1, 3)


def span(text: str, s: str) -> Span:
    b = text.encode()
    start = b.index(s.encode())
    end = start + len(s.encode())
    row = b.count(b"\n", 0, start)
    col = start - (b.rfind(b"\n", 0, start) + 1)
    return Span(start, end, (row, col), (row, col + len(s.encode())))


def test_finding_becomes_a_diagnostic_with_fix_and_witness() -> None:
    text = "def k():\n    s = 'é'; tl.store(p, v)\n    tl.load(p)\n"
    f = Finding(
        code="MB002",
        name="oob-store",
        severity=Severity.ERROR,
        kernel="k",
        span=span(text, "tl.store(p, v)"),
        message="store out of bounds",
        witness={"summary": "n=1 pid=0 writes out[1]", "n": 1},
        fix=Fix(
            "Add a mask",
            (TextEdit(span(text, "v)").end_byte - 1, span(text, "v)").end_byte - 1, ", mask=m"),),
        ),
        related=(Related(span(text, "tl.load(p)"), "loaded here"),),
    )
    (d,) = convert.diagnostics([f], text.encode(), "file:///k.py", UTF16, 7, {})
    assert d.range == types.Range(start=pos(1, 13), end=pos(1, 27))
    assert d.code == "MB002" and d.source == "argus" and d.severity == types.DiagnosticSeverity.Error
    assert d.code_description.href.endswith("MB002.md")
    assert [r.message for r in d.related_information] == ["loaded here", "witness: n=1 pid=0 writes out[1]"]
    assert d.related_information[0].location.range.start == pos(2, 4)
    assert d.data["version"] == 7 and d.data["witness"]["n"] == 1
    (edit,) = d.data["fix"]["edits"]
    assert edit == {
        "range": {"start": {"line": 1, "character": 26}, "end": {"line": 1, "character": 26}},
        "newText": ", mask=m",
    }


def test_severity_overrides_use_the_longest_prefix() -> None:
    f = Finding("PF001", "no-autotune", Severity.HINT, "k", Span(0, 1, (0, 0), (0, 1)), "m")
    assert convert.severity_of(f, {}) == types.DiagnosticSeverity.Hint
    assert convert.severity_of(f, {"PF": "warning"}) == types.DiagnosticSeverity.Warning
    assert convert.severity_of(f, {"PF": "warning", "PF001": "off"}) is None
    assert convert.diagnostics([f], b"x", "file:///k.py", UTF16, 1, {"P": "off"}) == []
