"""A kernel launched after another by the same launcher enters the first kernel's cache key
through what model/launch_later.py reads of it (its parameters and those it writes through),
not through its text: an edit inside the later kernel that keeps those re-analyzes the later
kernel only (issue 13: a token typed in one kernel of an autograd class re-analyzed its
neighbours), and one that changes them re-analyzes both, equal to a cold check."""

from __future__ import annotations

from argus.analyzers import KernelCache, check_source

from tests.analyzers.test_written_by_later_launch import _TWO


def _checked(text: str, cache: KernelCache) -> tuple[list, int]:
    """The findings through `cache` (equal to a cold check's) and the first level's misses."""
    misses = cache.misses
    found = check_source(text, "t.py", cache=cache)
    assert found == check_source(text, "t.py")
    return found, cache.misses - misses


def test_an_edit_in_the_later_kernel_that_keeps_its_writes_re_analyzes_it_alone() -> None:
    cache = KernelCache()
    text = _TWO.format(target="sums_ptr + n")
    found, misses = _checked(text, cache)
    assert misses == 2 and "GR001" not in {f.code for f in found}
    edited = text.replace("mask=mask, other=0)", "mask=mask, other=1)")
    assert edited != text
    _, misses = _checked(edited, cache)
    assert misses == 1  # total_kernel; part_sum_kernel's key holds total_kernel's writes only


def test_an_edit_that_changes_what_the_later_kernel_writes_re_analyzes_both() -> None:
    cache = KernelCache()
    _checked(_TWO.format(target="sums_ptr + n"), cache)
    found, misses = _checked(_TWO.format(target="res_ptr"), cache)
    assert misses == 2
    assert "GR001" in {f.code for f in found}  # `sums[n]` is now written by no launch
