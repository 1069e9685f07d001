"""Bounded cost on odd but legal input (issue 12 item 4): each case ends in AR001 or a clean
result, bounded by the checker's own budget rather than by a timed assertion.

The budget's refusals happen before the cost is paid (a huge constant is refused from its
operands' sizes, a huge tile from its shape), so these tests would hang or run out of memory,
not merely run slow, if a guard were missing. The odd files are tests/fixtures/bounded/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from argus.analyzers import check_source, kernel_timeout
from argus.analyzers.interp.budget import TRITON_MAX_NUMEL, current_timeout, oversized_result
from argus.analyzers.interp.programs import MAX_PROGRAMS, bare_axis_programs, spread_programs
from argus.analyzers.module_constants import _const_value

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bounded"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.py.txt").read_text()


def judged(findings) -> list:
    return [f for f in findings if f.severity.value in ("error", "warning")]


def test_a_literal_grid_of_two_to_the_31_is_sampled_not_listed() -> None:
    assert judged(check_source(fixture("grid"))) == []


def test_program_choice_is_bounded_whatever_the_grid() -> None:
    progs, complete = spread_programs((2**31 - 1, 1, 1))
    assert not complete and len(progs) <= MAX_PROGRAMS
    assert (0, 0, 0) in progs and (2**31 - 2, 0, 0) in progs
    assert spread_programs((3, 2, 1)) == (
        [(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0)],
        True,
    )
    assert len(bare_axis_programs((4, 2**31 - 1, 1), {1}, True)) <= 4 + 3


def test_a_batch_axis_next_to_a_huge_tiled_axis_is_sampled() -> None:
    # axis 1 is read and ignored: every program along it writes the same tiles, a real race,
    # which the sampled programs still find
    text = fixture("grid").replace("(2**31 - 1,)", "(2**31 - 1, 4)")
    text = text.replace(
        "pid = tl.program_id(axis=0)", "pid = tl.program_id(axis=0)\n    b = tl.program_id(axis=1)"
    )
    assert {f.code for f in judged(check_source(text))} == {"GR002"}


def test_a_tile_over_tritons_element_cap_is_ar001_budget_exceeded() -> None:
    found = check_source(fixture("tile"))
    assert [f.code for f in found] == ["AR001"], found
    assert "budget exceeded" in found[0].message and "16384 x 16384" in found[0].message
    assert f"{TRITON_MAX_NUMEL:,}" in found[0].message


@pytest.mark.parametrize("name", ["const_pow", "const_str"])
def test_a_huge_module_constant_is_refused_before_it_is_computed(name: str) -> None:
    assert judged(check_source(fixture(name))) == []


def test_a_huge_shift_constant_is_refused_too() -> None:
    text = fixture("const_pow").replace("N_HUGE = 9**9**9**9", "B = 1 << (1 << 40)")
    assert judged(check_source(text)) == []


def test_the_constant_evaluator_keeps_ordinary_arithmetic() -> None:
    for text, want in [("2**31 - 1", 2**31 - 1), ("1 << 20", 1 << 20), ("-(3 * 4) // 5", -3), ("7 / 2", 3.5)]:
        v = _const_value(ast.parse(text, mode="eval").body)
        assert v is not None and v.item() == want, text
    for text in ["9**9**9**9", '"a" * 2**33', "1 // 0", "10 ** 5000"]:
        assert _const_value(ast.parse(text, mode="eval").body) is None, text


def test_host_arithmetic_judges_the_size_of_a_result_from_its_operands() -> None:
    assert oversized_result(ast.Pow(), 9, 9**9)
    assert oversized_result(ast.Mult(), "a", 2**33)
    assert oversized_result(ast.Mult(), [0], 2**33)
    assert oversized_result(ast.LShift(), 1, 1 << 40)
    assert not oversized_result(ast.Pow(), 2, 31)
    assert not oversized_result(ast.Mult(), (1, 2), 4)


def test_a_launcher_grid_from_a_huge_power_is_not_computed() -> None:
    text = fixture("grid").replace("(2**31 - 1,)", "(9**9**9**9,)")
    assert judged(check_source(text)) == []  # the host evaluator leaves that grid opaque


def test_a_kernel_past_its_time_budget_is_ar001_and_the_next_kernel_is_checked() -> None:
    head, _, bug = fixture("unmasked").partition("@triton.jit")
    text = fixture("nested") + "\n\n@triton.jit" + bug
    with kernel_timeout(0.3):
        found = check_source(text)
    nested = [f for f in found if f.kernel == "nested_kernel"]
    assert [f.code for f in nested] == ["AR001"] and "budget exceeded" in nested[0].message
    assert "0.3 s" in nested[0].message
    assert any(f.kernel == "add_kernel" and f.code == "MB002" for f in found), found


def test_the_time_budget_is_scoped_and_validated() -> None:
    before = current_timeout()
    with kernel_timeout(2.5):
        assert current_timeout() == 2.5
    assert current_timeout() == before
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="positive number of seconds"), kernel_timeout(bad):
            pass
