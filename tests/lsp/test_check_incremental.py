"""What the language server's live checks rest on (issue 13): the per-kernel cache survives edits
that only move a kernel's launcher, cached findings move with the text they point into, and a
check stops between the programs it interprets once its caller says so; the kernel being edited is analyzed
first, and the findings of kernels not re-checked yet are carried over an edit.

All run the real checker on real kernels; the only thing observed is the real cache's counters
or the `should_stop` callable the checker is handed."""

from __future__ import annotations

import pytest
from argus.analyzers import Finding, KernelCache, Span, check_source
from argus.analyzers.cache import shift_findings
from argus.analyzers.interpretation import Cancelled
from lsp_support import mutant

from argus_lsp.features.carry import carry_over

# the kernel of vector_add_v2 (MB002: an unmasked store), then a second kernel, then the first
# kernel's launcher: a line typed in the second kernel moves the first kernel's launcher only
SECOND = """
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def scale(x):
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)

"""


def layout() -> str:
    text, _, _ = mutant("vector_add_v2")
    head, sep, launcher = text.partition("\n\ndef add(")
    return head + "\n" + SECOND + sep + launcher


def insert_line(text: str, after: str, line: str) -> str:
    at = text.index(after) + len(after)
    return text[:at] + line + text[at:]


def test_a_line_typed_above_a_launcher_reanalyzes_only_the_edited_kernel() -> None:
    text = layout()
    cache = KernelCache()
    first = check_source(text, cache=cache)
    assert any(f.code == "MB002" and f.kernel == "add_kernel" for f in first)
    assert cache.misses == 2

    edited = insert_line(text, "m = offs < n\n", "    m = m & (offs >= 0)\n")
    misses = cache.misses
    warm = check_source(edited, cache=cache)
    assert cache.misses - misses == 1  # scale_kernel only; add_kernel's launcher just moved
    assert warm == check_source(edited)  # and what the cache gave back is what a cold check says


def test_cached_findings_move_with_the_piece_they_point_into() -> None:
    def at(byte: int, row: int) -> Finding:
        return Finding("MB002", "mb", "error", "k", Span(byte, byte + 3, (row, 4), (row, 7)), "m")

    kernel_then_launcher = [(0, 100, 0), (300, 400, 20)]
    moved = [(0, 100, 0), (350, 450, 23)]  # three lines typed between the two
    in_kernel, in_launcher, elsewhere = shift_findings(
        [at(10, 1), at(310, 21), at(200, 12)], kernel_then_launcher, moved
    )
    assert (in_kernel.span.start_byte, in_kernel.span.start_point) == (10, (1, 4))
    assert (in_launcher.span.start_byte, in_launcher.span.start_point) == (360, (24, 4))
    assert (elsewhere.span.start_byte, elsewhere.span.start_point) == (200, (12, 4))  # with the kernel

    nested = [(0, 500, 0), (100, 200, 5)]  # a kernel defined inside its launcher
    (inner,) = shift_findings([at(150, 7)], nested, [(0, 520, 0), (120, 220, 6)])
    assert (inner.span.start_byte, inner.span.start_point) == (170, (8, 4))  # the innermost piece


def test_a_check_stops_between_probe_runs_once_asked() -> None:
    text, _, _ = mutant("vector_add_v2")
    asked = 0

    def count(stop_at: int | None):
        def should_stop() -> bool:
            nonlocal asked
            asked += 1
            return stop_at is not None and asked >= stop_at

        return should_stop

    full = check_source(text, should_stop=count(None))
    per_check = asked
    assert per_check > 2  # once per kernel, then before every program of every probe
    asked = 0
    with pytest.raises(Cancelled):
        check_source(text, should_stop=count(2))  # inside the kernel, after its first program
    assert asked == 2

    cache = KernelCache()
    asked = 0
    with pytest.raises(Cancelled):
        check_source(text, cache=cache, should_stop=count(2))
    assert check_source(text, cache=cache) == full  # a stopped check left nothing half-done cached


def test_the_kernel_being_edited_is_analyzed_first_and_progress_is_told() -> None:
    text = layout()
    cache = KernelCache()
    check_source(text, cache=cache)
    # a constant both kernels read: neither is cached any more
    edited = text.replace("import triton.language as tl\n", "import triton.language as tl\n\nSCALE = 2\n")
    focus = edited.index("m = offs < n")
    told: list[tuple[list[Finding], list[str]]] = []
    final = check_source(edited, cache=cache, focus=focus, progress=lambda f, p: told.append((f, p)))
    assert [pending for _f, pending in told] == [["add_kernel"]]  # scale_kernel went first
    assert all(f.kernel == "scale_kernel" for f in told[0][0])
    assert final == check_source(edited)

    told.clear()
    check_source(
        edited.replace("SCALE = 2", "SCALE = 3"), cache=cache, focus=0, progress=lambda *a: told.append(a)
    )
    assert [pending for _f, pending in told] == [["scale_kernel"]]  # no kernel holds byte 0: file order


def test_findings_of_waiting_kernels_are_carried_over_an_edit() -> None:
    text = layout()
    findings = check_source(text)
    (store,) = [f for f in findings if f.code == "MB002" and f.kernel == "add_kernel"]
    typed_below = insert_line(text, "m = offs < n\n", "    m = m & (offs >= 0)\n")  # after add_kernel
    assert carry_over(findings, {"add_kernel"}, text.encode(), typed_below.encode()).count(store) == 1

    typed_above = insert_line(text, "import triton.language as tl\n", "\nSCALE = 2\n")
    (moved,) = [
        f
        for f in carry_over(findings, {"add_kernel"}, text.encode(), typed_above.encode())
        if f.code == "MB002"
    ]
    assert moved.span.start_byte == store.span.start_byte + len("\nSCALE = 2\n")
    assert moved.span.start_point == (store.span.start_point[0] + 2, store.span.start_point[1])
    assert moved in check_source(typed_above)  # where a fresh check puts it

    on_its_line = text.replace("tl.store(out_ptr + offsets, x + y)", "tl.store(out_ptr  + offsets, x + y)")
    assert store not in carry_over(findings, {"add_kernel"}, text.encode(), on_its_line.encode())
    assert all(
        f.kernel == "add_kernel" for f in carry_over(findings, {"add_kernel"}, text.encode(), text.encode())
    )
