"""A count the launcher asks the device for (`NS = get_multiprocessor_count(...)`) is a named
pick (device_picks.py): the row split `BS = triton.cdiv(T, NS)` and the grid `(NS,)` it makes
are known under each probe, so the kernel is judged instead of an AR001; a finding only one
count shows is a hint naming it; `min(count, T)` keeps the known side and names no pick."""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_SRC = """
import torch
import triton
import triton.language as tl


def get_multiprocessor_count(idx=0):
    return triton.runtime.driver.active.utils.get_device_properties(idx)['multiprocessor_count']


@triton.jit
def col_sum_kernel(x_ptr, part_ptr, T, D, BS, BD: tl.constexpr):
    i_s = tl.program_id(0)
    cols = tl.arange(0, BD)
    acc = tl.zeros([BD], dtype=tl.float32)
    for i_t in range(i_s * BS, {end}):
        acc += tl.load(x_ptr + i_t * D + cols, mask=cols < D, other=0.0)
    tl.store(part_ptr + i_s * D + cols, acc, mask=cols < D)


def col_sum(x):
    T, D = x.shape
    NS = {ns}
    BS = triton.cdiv(T, NS)
    part = torch.empty(({rows}, D), dtype=torch.float32, device=x.device)
    col_sum_kernel[(NS,)](x, part, T, D, BS, BD=triton.next_power_of_2(D))
    return part.sum(0)
"""

_QUERY = "get_multiprocessor_count(x.device.index)"


def _check(end: str = "min((i_s + 1) * BS, T)", ns: str = _QUERY, rows: str = "NS") -> list:
    return check_source(_SRC.format(end=end, ns=ns, rows=rows), "col_sum.py")


def _shown(findings: list) -> list:
    return [(f.code, f.severity, f.message) for f in findings]


def test_a_device_split_is_judged_without_a_note() -> None:
    findings = _check()
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    # MB003 (`i_t * D` in int32) is the overflow rule's, whatever the split
    assert not [f for f in findings if f.severity.fails_check and f.code != "MB003"], _shown(findings)


def test_a_split_that_walks_past_the_rows_is_found() -> None:
    """`range(i_s * BS, (i_s + 1) * BS)`: the last program reads past T when NS does not
    divide it (either count)."""
    findings = _check(end="(i_s + 1) * BS")
    assert not [f for f in findings if f.code == "AR001"], _shown(findings)
    assert [f for f in findings if f.code == "MB001" and "x_ptr" in f.message], _shown(findings)


def test_a_finding_only_one_count_shows_is_a_hint_naming_it() -> None:
    """Partials for 3 programs: past their end with 4 programs, inside with 3."""
    findings = _check(rows="3")
    mb = [f for f in findings if f.code == "MB002" and "part_ptr" in f.message]
    assert mb and all(f.severity == Severity.HINT for f in mb), _shown(findings)
    assert "`get_multiprocessor_count()` (the device's count, not known here) = 4" in mb[0].message


def test_min_of_the_count_and_the_rows_is_the_rows_and_names_no_pick() -> None:
    """`NS = min(count, T)`: a device with as many cores as rows launches T programs, so the
    launch is judged as `NS = T` (3 partials: rows left unwritten at T = 2, an error) and no
    finding names the count."""
    picked = _check(ns=f"min({_QUERY}, T)", rows="3")
    plain = _check(ns="T", rows="3")
    assert _shown(picked) == _shown(plain), _shown(picked)
    assert [f for f in picked if f.code == "GR001" and f.severity == Severity.ERROR], _shown(picked)
    assert not [f for f in picked if "device's count" in f.message], _shown(picked)
