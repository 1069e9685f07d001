"""Hover's kernel traces (issue 13): the first hover in a kernel interprets its first program and
keeps the trace; a hover on another name of that kernel only looks it up, and an edit to the
kernel makes a new trace. The answers are those of a hover without the memo."""

from __future__ import annotations

from argus.analyzers import KernelCache, describe_at
from test_cache_binding import LAUNCHED


def at(text: str, needle: str) -> int:
    return text.encode().index(needle.encode())


def test_a_second_hover_in_a_kernel_looks_the_trace_up() -> None:
    memo = KernelCache()
    first = describe_at(LAUNCHED, at(LAUNCHED, "offs = pid"), memo=memo)
    second = describe_at(LAUNCHED, at(LAUNCHED, "x = tl.load"), memo=memo)
    assert (memo.misses, memo.hits) == (1, 1)
    assert first == describe_at(LAUNCHED, at(LAUNCHED, "offs = pid"))
    assert second == describe_at(LAUNCHED, at(LAUNCHED, "x = tl.load"))
    assert first is not None and "offs" in first


def test_an_edit_in_the_kernel_traces_it_again() -> None:
    memo = KernelCache()
    describe_at(LAUNCHED, at(LAUNCHED, "offs = pid"), memo=memo)
    edited = LAUNCHED.replace("    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)\n\n")
    shown = describe_at(edited, at(edited, "x = tl.load"), memo=memo)
    assert memo.misses == 2  # a blank line moves the trace's lines: not the same text
    assert shown == describe_at(edited, at(edited, "x = tl.load"))
