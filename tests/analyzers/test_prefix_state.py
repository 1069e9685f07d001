"""A store inside the loop that accumulates a value writes its running state (a scan's prefix),
not the finished reduction: DF003 judges only the stores after the loop. The fixture
tests/corpus_realworld/prefix_state.py is clean; the same kernel with the chunk loop's tail
dropped is still found, at the final store's loop."""

from __future__ import annotations

from pathlib import Path

from argus.analyzers import check_source
from argus.analyzers.findings import Severity

FIXTURE = Path(__file__).resolve().parents[1] / "corpus_realworld" / "prefix_state.py"


def serious(source: str) -> list[tuple[str, int, str]]:
    found = check_source(source, "prefix_state.py")
    return [(f.code, f.span.line, f.message) for f in found if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_the_prefix_states_are_not_a_skipped_reduction() -> None:
    assert serious(FIXTURE.read_text(encoding="utf-8")) == []


def test_a_dropped_tail_is_still_found_on_the_final_state() -> None:
    dropped = FIXTURE.read_text(encoding="utf-8").replace("for c in range(n_chunks):", "for c in range(T // CHUNK):")
    found = serious(dropped)
    assert any(code == "DF003" and "final_ptr" in msg for code, _, msg in found), found
