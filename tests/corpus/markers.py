"""Corpus markers: `# expect: CODE[, CODE]` (the bug is reported here) and `# also: CODE` (a
second rule the same bug legitimately breaks here). Markers are stripped before checking, since
the checker must not see the answer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK = re.compile(r"\s*#\s*(expect|also)\s*:\s*([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)\s*$")


@dataclass
class Marked:
    text: str
    expect: dict[int, set[str]] = field(default_factory=dict)  # 1-based line -> codes
    also: dict[int, set[str]] = field(default_factory=dict)

    @property
    def is_mutant(self) -> bool:
        return bool(self.expect)


def strip_markers(source: str) -> Marked:
    out, marked = [], Marked("")
    for i, line in enumerate(source.split("\n"), 1):
        while m := MARK.search(line):
            codes = {c.strip() for c in m.group(2).split(",")}
            (marked.expect if m.group(1) == "expect" else marked.also).setdefault(i, set()).update(codes)
            line = line[: m.start()].rstrip()
        out.append(line)
    marked.text = "\n".join(out)
    return marked


def judge(marked: Marked, findings: list) -> tuple[bool, list]:
    """(detected, false positives) the way shared/tools/score_corpus.py scores them."""
    serious = [f for f in findings if f.severity.value in ("error", "warning")]

    def lines(f) -> range:
        return range(f.span.start_point[0] + 1, max(f.span.end_point[0], f.span.start_point[0]) + 2)

    hit = any(f.code in marked.expect.get(ln, set()) for f in serious for ln in lines(f))
    fps = [f for f in serious
           if not any(f.code in (marked.expect.get(ln, set()) | marked.also.get(ln, set())) for ln in lines(f))]
    return hit, fps
