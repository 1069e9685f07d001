"""The bugs next to the fgtriage fixes stay found (docs/realworld.md, branch `fgtriage`).

The fixes read correct flag-gems idioms as correct: a 0-d tensor holds one element (L9), a
max over |x| padded with 0 (K13), an "any" as a max over booleans padded with False (K14), a
value scattered to the slot its data names (K6).
Each test here takes the fixture of tests/corpus_realworld and breaks it the way a real kernel
breaks that idiom, and the finding must still be at the broken line.
"""

from __future__ import annotations

from pathlib import Path

from argus.analyzers import Severity, check_source

FOLDER = Path(__file__).resolve().parents[1] / "corpus_realworld"


def _mutant(name: str, old: str, new: str) -> str:
    text = (FOLDER / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{name}: the mutation site must be unique"
    return text.replace(old, new)


def _lines(src: str, code: str) -> set[int]:
    found = check_source(src, "mutant.py")
    return {f.line for f in found if f.code == code and f.severity in (Severity.ERROR, Severity.WARNING)}


def _line_of(src: str, needle: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if needle in line)


def test_the_fixtures_are_clean() -> None:
    for name in (
        "abs_max_rows.py",
        "any_nonzero.py",
        "zero_dim_output.py",
        "scatter_to_rank.py",
        "valid_count_bounds_pid.py",
    ):
        src = (FOLDER / name).read_text(encoding="utf-8")
        bad = [f for f in check_source(src, name) if f.severity in (Severity.ERROR, Severity.WARNING)]
        assert not bad, (name, [(f.code, f.line, f.message) for f in bad])


def test_a_max_of_signed_values_padded_with_zero_is_still_found() -> None:
    src = _mutant(
        "abs_max_rows.py", "tl.maximum(best, tl.abs(v.to(tl.float32)))", "tl.maximum(best, v.to(tl.float32))"
    )
    src = src.replace(
        "best = tl.zeros([ROWS, COLS], dtype=tl.float32)",
        'best = tl.full([ROWS, COLS], -float("inf"), tl.float32)',
    )
    assert _line_of(src, "tl.max(best, axis=1)") in _lines(src, "DF003")


def test_a_running_max_started_at_zero_is_still_found() -> None:
    # flag-gems' cross-entropy bug: the max of signed logits starts at 0, not -inf
    src = _mutant(
        "abs_max_rows.py", "tl.maximum(best, tl.abs(v.to(tl.float32)))", "tl.maximum(best, v.to(tl.float32))"
    )
    src = src.replace("other=0.0)", 'other=-float("inf"))')
    assert _line_of(src, "tl.max(best, axis=1)") in _lines(src, "DF003")


def test_an_any_whose_padding_is_true_is_still_found() -> None:
    src = _mutant("any_nonzero.py", "mask=ok, other=0.0)", "mask=ok, other=1.0)")
    assert _line_of(src, "tl.max(v != 0, axis=1)") in _lines(src, "DF003")


def test_a_store_past_a_zero_dim_tensor_is_still_found() -> None:
    src = _mutant(
        "zero_dim_output.py",
        "tl.store(out_ptr, tl.sum(p, axis=0))",
        "tl.store(out_ptr + 1, tl.sum(p, axis=0))",
    )
    assert _line_of(src, "tl.store(out_ptr + 1") in _lines(src, "MB002")


def test_a_value_stored_one_slot_off_by_position_is_still_found() -> None:
    # the address is the lane's position, not data: the previous element lands at i
    src = _mutant(
        "scatter_to_rank.py",
        "tl.store(out_ptr + rank, cur, mask=mask)",
        "tl.store(out_ptr + i, prev, mask=mask)",
    )
    assert _line_of(src, "tl.store(out_ptr + i, prev") in _lines(src, "DF004")


def test_a_gathered_row_scattered_by_position_is_still_found() -> None:
    # the scatter facts still judge stores of gathered rows (MoE: sorted slot instead of token id)
    src = (FOLDER.parents[0] / "corpus_own" / "moe_fused_v2.py").read_text(encoding="utf-8")
    marked = [i for i, line in enumerate(src.splitlines(), 1) if "DF004" in line and "#" in line]
    assert set(marked) & _lines(src, "DF004")


def test_a_valid_count_the_kernel_never_tests_is_still_evidence() -> None:
    # K15 drops `num_valid_tokens` as MB005 evidence only where it bounds the program id; a
    # kernel given the count that never tests it (the sorted-ids padding unchecked) still warns
    src = _mutant("valid_count_bounds_pid.py", "    if slot >= num_valid_tokens:\n        return\n", "")
    assert _line_of(src, "row = tl.load(x_ptr + tok * stride_x") in _lines(src, "MB005")
