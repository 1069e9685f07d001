"""Explicit tag assertions written by kernel authors in comments (DF005).

Two forms, on the line of the statement they follow (checked after it runs, in every probe and
program; comments never change what Triton compiles):

    acc += tl.dot(a, b)        # argus: tag a[1] == b[0]
    c = acc.to(tl.float16)     # argus: tag c ~ (M, N)

`X[i] == Y[j]`: the coordinate X carries along its axis i equals the one Y carries along axis j,
lane by lane (same dimension class, same index). `X ~ (A, B)`: X's axis 0 runs along dimension A
and axis 1 along B (dimension names as the launcher binds them: `M, K = a.shape`). Anything else
after `# argus: tag` is reported as AR001 (not understood), never ignored silently.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

EQ = re.compile(r"^\s*([A-Za-z_]\w*)\s*\[\s*(-?\d+)\s*\]\s*==\s*([A-Za-z_]\w*)\s*\[\s*(-?\d+)\s*\]\s*$")
AXES = re.compile(r"^\s*([A-Za-z_]\w*)\s*~\s*\(\s*([A-Za-z_][\w']*(?:\s*,\s*[A-Za-z_][\w']*)*)\s*,?\s*\)\s*$")
TAG = re.compile(r"#\s*argus:\s*tag\s+(.*?)\s*$")


@dataclass(frozen=True)
class TagAssertion:
    row: int  # 0-based file row
    text: str
    kind: str  # "eq" | "axes" | "bad"
    left: str = ""
    left_axis: int = 0
    right: str = ""
    right_axis: int = 0
    axes: tuple[str, ...] = ()


@functools.lru_cache(maxsize=4)
def _lines(source: bytes) -> list[str]:
    """The file's lines, split once per file (not once per kernel: a file of ten thousand
    kernels made that quadratic)."""
    return source.decode("utf-8", errors="replace").split("\n")


def parse_assertions(source: bytes, first_row: int, last_row: int) -> dict[int, TagAssertion]:
    out: dict[int, TagAssertion] = {}
    lines = _lines(source)
    for row in range(first_row, min(last_row + 1, len(lines))):
        m = TAG.search(lines[row])
        if not m:
            continue
        body = m.group(1)
        if eq := EQ.match(body):
            out[row] = TagAssertion(
                row, body, "eq", eq.group(1), int(eq.group(2)), eq.group(3), int(eq.group(4))
            )
        elif ax := AXES.match(body):
            out[row] = TagAssertion(
                row, body, "axes", ax.group(1), axes=tuple(s.strip() for s in ax.group(2).split(","))
            )
        else:
            out[row] = TagAssertion(row, body, "bad")
    return out
