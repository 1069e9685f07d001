"""Findings of the previous check carried over an edit, for kernels not re-checked yet.

A check publishes as each analyzed kernel finishes (diagnostics.py). The kernels still waiting
would vanish from such a publish and come back a moment later; instead they keep what the last
finished check said about them, moved through the edit: the two texts share a prefix and a
suffix, a finding wholly in the prefix stays put, one wholly in the suffix (and not on the line
where the edit ends, whose columns moved) shifts by the bytes and rows the edit added, and one
that touches the edited text is left out until its kernel's own result arrives.
"""

from __future__ import annotations

from collections.abc import Iterable

from argus.analyzers import Finding
from argus.analyzers.cache import shift_findings


def first_difference(old: bytes, new: bytes) -> int:
    """Length of the longest common prefix (binary search over slice compares: C speed)."""
    lo, hi = 0, min(len(old), len(new))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(old: bytes, new: bytes, prefix: int) -> int:
    """Length of the longest common suffix that does not overlap the common prefix."""
    lo, hi = 0, min(len(old), len(new)) - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def carry_over(findings: Iterable[Finding], kernels: set[str], old: bytes, new: bytes) -> list[Finding]:
    """The findings of `kernels` among `findings` (computed on `old`), placed in `new`."""
    prefix = first_difference(old, new)
    suffix = common_suffix(old, new, prefix)
    old_end, new_end = len(old) - suffix, len(new) - suffix
    # the first byte of the suffix that sits on a line of its own (columns unchanged from there)
    line_after = old.find(b"\n", old_end)
    stable_from = len(old) + 1 if line_after < 0 else line_after + 1

    def spans(f: Finding) -> list[tuple[int, int]]:
        out = [
            (f.span.start_byte, f.span.end_byte),
            *((r.span.start_byte, r.span.end_byte) for r in f.related),
        ]
        if f.fix is not None:
            out.extend((e.start_byte, e.end_byte) for e in f.fix.edits)
        return out

    before: list[Finding] = []
    after: list[Finding] = []
    for f in findings:
        if f.kernel not in kernels:
            continue
        where = spans(f)
        if all(end <= prefix for _start, end in where):
            before.append(f)
        elif all(start >= stable_from for start, _end in where):
            after.append(f)
    if not after:
        return before
    old_row, new_row = old.count(b"\n", 0, old_end), new.count(b"\n", 0, new_end)
    moved = shift_findings(after, [(old_end, len(old), old_row)], [(new_end, len(new), new_row)])
    return before + moved
