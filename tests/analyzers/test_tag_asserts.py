"""DF005: the author's tag assertions are checked where they are written."""

from __future__ import annotations

from pathlib import Path

from argus.analyzers import check_source

FIXTURE = Path(__file__).parents[1] / "fixtures" / "tag_asserts.py"


def findings_by_line(text: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in check_source(text):
        out.setdefault(f.line, set()).add(f.code)
    return out


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_wrong_axes_assertion_fails_and_right_ones_hold() -> None:
    text = FIXTURE.read_text()
    got = findings_by_line(text)
    assert "DF005" in got[line_of(text, "tag c ~ (N, M)")]
    assert "DF005" not in got.get(line_of(text, "tag b ~ (K, N)"), set())
    assert "DF005" not in got.get(line_of(text, "tag a[1] == b[0]"), set())


def test_malformed_assertion_is_reported_not_ignored() -> None:
    text = FIXTURE.read_text()
    got = findings_by_line(text)
    assert "AR001" in got[line_of(text, "tag c ~ (M,")]


def test_contraction_assertion_fails_on_a_transposed_operand() -> None:
    text = FIXTURE.read_text().replace("acc += tl.dot(a, b)  # argus: tag a[1] == b[0]",
                                       "acc += tl.dot(a, b)  # argus: tag a[0] == b[0]")
    got = findings_by_line(text)
    assert "DF005" in got[line_of(text, "tag a[0] == b[0]")]


def test_comments_are_the_only_change() -> None:
    """Without the comments the same kernel has no DF005 at all."""
    import re

    text = re.sub(r"  # argus: tag.*", "", FIXTURE.read_text())
    assert not [f for f in check_source(text) if f.code in ("DF005", "AR001")]
