"""Kernel-side idioms that read as bugs only to a checker that guesses (issue 12): each correct
fixture of tests/corpus_realworld is clean (test_realworld_idioms.py), and here the same kernel
with the bug of the same shape seeded into it is still found, at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.analyzers import Severity, check_source

FOLDER = Path(__file__).resolve().parents[1] / "corpus_realworld"

# (fixture, text replaced, seeded text, the code expected on the seeded line)
SEEDED = [
    # the accumulator's fp16 written in the kernel (not read off an unknown buffer): NU001 stands
    (
        "count_buffer_dtype.py",
        "acc = tl.zeros([BLOCK], dtype=counts_ptr.dtype.element_ty)",
        "acc = tl.zeros([BLOCK], dtype=tl.float16)",
        "NU001",
    ),
    # every program stores its own block's sum to one element: the last writer wins
    ("uniform_store.py", "tl.store(meta_ptr, n)", "tl.store(meta_ptr, tl.sum(x, axis=0))", "GR002"),
    # the program id instead of a constant: the writers disagree
    ("uniform_store.py", "tl.store(meta_ptr + 1, 1)", "tl.store(meta_ptr + 1, tl.program_id(0))", "GR002"),
]


def _seed(name: str, old: str, new: str) -> tuple[str, set[int]]:
    text = (FOLDER / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{name}: {old!r}"
    start = text[: text.index(old)].count("\n") + 1
    return text.replace(old, new), set(range(start, start + new.count("\n") + 1))


@pytest.mark.parametrize(("name", "old", "new", "code"), SEEDED, ids=lambda x: str(x)[:40])
def test_seeded_bug_of_the_same_shape_is_found(name: str, old: str, new: str, code: str) -> None:
    text, lines = _seed(name, old, new)
    findings = check_source(text, str(FOLDER / name))
    serious = [(f.code, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert any(c == code and ln in lines for c, ln in serious), serious


def test_fixtures_are_clean_before_seeding() -> None:
    for name in {s[0] for s in SEEDED}:
        findings = check_source((FOLDER / name).read_text(encoding="utf-8"), name)
        assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)], name
