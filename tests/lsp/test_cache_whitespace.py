"""The per-kernel cache ignores trailing blanks and blank lines (analyzers/layout.py), the edits a
person makes most while typing (issue 13: a new line inside a big kernel re-interpreted it).

Each test runs the real checker twice on the edited text, once with the cache of the original
text and once cold, and requires the same findings at the same places; what the cache may not
reuse (a blank inside a string the kernel reads, a backslash continuation, a fix whose replaced
bytes changed) is analyzed again."""

from __future__ import annotations

import pytest
from argus.analyzers import Finding, KernelCache, Span, check_source
from argus.analyzers.findings import Fix, TextEdit
from argus.analyzers.frontend.parse import parse
from argus.analyzers.layout import Unmappable, move_findings, piece_of
from lsp_support import mutant


def ordered(findings: list[Finding]) -> list[Finding]:
    """Findings in one order (two kernels may report at the same span; their order is free)."""
    return sorted(findings, key=lambda f: (f.sort_key(), f.kernel, f.message))


def warm_and_cold(text: str, edited: str) -> tuple[list[Finding], list[Finding], int]:
    """(findings of `edited` with the cache of `text`, findings of a cold check, kernels analyzed)."""
    cache = KernelCache()
    check_source(text, cache=cache)
    misses = cache.misses
    warm = check_source(edited, cache=cache)
    return ordered(warm), ordered(check_source(edited)), cache.misses - misses


def base() -> str:
    text, _, _ = mutant("vector_add_v2")
    return text


def test_blank_lines_and_trailing_blanks_in_kernel_and_launcher_reuse_every_finding() -> None:
    text = base()
    edited = (
        text.replace("    mask = offsets < n_elements\n", "    mask = offsets < n_elements   \n\n    \n")
        .replace("    pid = tl.program_id(axis=0)\n", "    pid = tl.program_id(axis=0)\t \n")
        .replace("    n_elements = x.numel()\n", "    n_elements = x.numel()\n        \n")
    )
    warm, cold, analyzed = warm_and_cold(text, edited)
    assert analyzed == 0
    store = [f for f in cold if f.code == "MB002"]
    assert store and store[0].fix is not None  # the finding below the blank lines, with its fix
    assert warm == cold  # spans, rows, related spans and fix offsets all where a cold check puts them


def test_a_docstring_is_free_to_change_its_blanks() -> None:
    pid = "    pid = tl.program_id(axis=0)\n"
    text = base().replace(pid, '    """Adds.\n\n    Two vectors."""\n' + pid)
    edited = text.replace("Adds.\n", "Adds.   \n  \n\n")
    warm, cold, analyzed = warm_and_cold(text, edited)
    assert (analyzed, warm) == (0, cold)


def test_what_a_blank_could_change_is_analyzed_again() -> None:
    text = base()
    # a string the launcher reads: its value changes with the blanks inside it
    quoted = text.replace("    return out\n", '    tag = """a\n"""\n    return out\n', 1)
    _, _, analyzed = warm_and_cold(quoted, quoted.replace('"""a\n', '"""a  \n'))
    assert analyzed == 1
    # after a backslash, a trailing blank turns a continuation into a syntax error
    joined = text.replace("    grid = (triton.cdiv", "    grid = \\\n        (triton.cdiv")
    warm, cold, analyzed = warm_and_cold(joined, joined.replace("grid = \\\n", "grid = \\  \n"))
    assert analyzed == 1 and warm == cold
    # a real character typed: the kernel is analyzed again, the launcher's other kernels are not
    _, _, analyzed = warm_and_cold(text, text.replace("x + y)", "x + y + 0.0)", 1))
    assert analyzed == 1


def test_findings_map_through_the_cuts_or_refuse() -> None:
    old_src = b"def f():\n    a = 1   \n\n\n    b = a\n"
    new_src = b"def f():\n    a = 1\n    b = a\n"
    (old_node,), (new_node,) = parse(old_src).root_node.children, parse(new_src).root_node.children
    old_text, old = piece_of(old_src, old_node)
    new_text, new = piece_of(new_src, new_node)
    assert old_text == new_text == new_src.rstrip(b"\n")

    at_b = old_src.index(b"b = a")
    b_span = Span(at_b, at_b + 5, (4, 4), (4, 9))
    (moved,) = move_findings([Finding("MB001", "n", "error", "f", b_span, "m")], [old], [new])
    assert (moved.span.start_byte, moved.span.start_point) == (new_src.index(b"b = a"), (2, 4))

    inside_a_cut = Span(at_b - 5, at_b, (3, 0), (4, 4))  # starts on a blank line that is gone
    with pytest.raises(Unmappable):
        move_findings([Finding("MB001", "n", "error", "f", inside_a_cut, "m")], [old], [new])

    end_a = old_src.index(b"1   ") + 1
    over_the_cut = Fix("t", (TextEdit(end_a, at_b, "x"),))  # would replace bytes that changed
    f = Finding("MB001", "n", "error", "f", b_span, "m", fix=over_the_cut)
    with pytest.raises(Unmappable):
        move_findings([f], [old], [new])
