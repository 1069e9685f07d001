"""Loops that return from a host helper (issue 12, item 3: liger-kernel's Ascend launchers).

`_get_max_blocks(n)` is `for mb in (4, 8, 16, 32): if n <= mb: return mb`: the loop runs over
items the code gives, so at the probe's sizes the `return` reached is known and the launch is
bound with it (before: any loop holding a `return` made the helper's value unknown, a stand-in
and an AR001 note). A search whose test reads the device (`num_cores`) picks some item the
code does not name: the helper's value is a named pick, as a helper's device-dependent tile
size is (helper_picks.py), also when it comes back as an item of a returned tuple. What the
code still does not establish (a `break`, items not known, a path that may raise) keeps the
stand-in and its note.

A `break` or `continue` of the search reached at a decided test ends the item or the loop as
in Python (fla's Ascend tile searches: `for BK in (128, 64, 32, 16): if k_cap < BK: continue`,
then an inner search over BV that returns the first pair under the budget); under an
undecided test it makes the value unknown.

Also: `BLOCK = tiles[0][0]` of a helper's unknown result (`compute_default_tiling_strategy`),
with a number as the fallback of an undecided `if`, is the helper's value: a named pick too.
"""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source

_SOURCE = """
import torch
import triton
import triton.language as tl
from other_library import get_core_count
{helper}

@triton.jit
def rows_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * D + cols, mask=cols < {bound})
    tl.store(y_ptr + row * D + cols, v * 2.0, mask=cols < D)


def launch(x):
    T, D = x.shape
    y = torch.empty_like(x)
    {unpack} = block_for(D)
    rows_kernel[(T,)](x, y, D, BLOCK=BLOCK)
    return y
"""

_SEARCH = """
def block_for(n):
    for b in (16, 32, 64):
        if n <= b:
            return b
    return triton.next_power_of_2(n)
"""

_DEVICE_SEARCH = """
def block_for(n):
    cores = get_core_count()
    block = 16
    for b in [128, 64, 32, 16]:
        if triton.cdiv(n, b) >= cores:
            block = b
            break
    return block, 4
"""

_UNDECIDED_RETURN = """
def block_for(n):
    cores = get_core_count()
    for b in (128, 64, 32):
        if triton.cdiv(n, b) >= cores:
            return max(b, triton.next_power_of_2(n))
    return triton.next_power_of_2(n)
"""

_MAY_RAISE = """
def block_for(n):
    for b in (128, 64, 32):
        if triton.cdiv(n, b) >= get_core_count():
            raise NotImplementedError
    return triton.next_power_of_2(n)
"""

_UNDECIDED_CONTINUE = """
def block_for(n):
    cores = get_core_count()
    for b in (64, 32, 16):
        if triton.cdiv(n, b) < cores:
            continue
        return max(b, triton.next_power_of_2(n))
    return triton.next_power_of_2(n)
"""

_UNKNOWN_ITEMS = """
def block_for(n):
    for b in get_core_count():
        if n <= b:
            return b
    return triton.next_power_of_2(n)
"""


def _check(helper: str, bound: str = "D", unpack: str = "BLOCK") -> list:
    return check_source(_SOURCE.format(helper=helper, bound=bound, unpack=unpack), "rows.py")


def _notes(findings: list) -> list[str]:
    return [f.message for f in findings if f.code == "AR001"]


def _failing(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_a_search_over_known_items_gives_the_return_it_reaches() -> None:
    findings = _check(_SEARCH)
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]


def test_an_off_by_one_mask_is_found_through_the_searched_value() -> None:
    findings = _check(_SEARCH, bound="D + 1")
    mb = [f for f in findings if f.code == "MB001"]
    assert mb and mb[0].severity == Severity.ERROR, [(f.code, f.severity, f.message) for f in findings]


@pytest.mark.parametrize(
    ("helper", "unpack"),
    [(_DEVICE_SEARCH, "BLOCK, warps"), (_UNDECIDED_RETURN, "BLOCK")],
    ids=["break-in-tuple", "undecided-return"],
)
def test_a_device_dependent_search_is_a_named_pick(helper: str, unpack: str) -> None:
    findings = _check(helper, unpack=unpack)
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]
    # the seeded off-by-one: an error where both picks read past the row, else a hint naming
    # the pick (which block the device gives is not known)
    bad = _check(helper, bound="D + 1", unpack=unpack)
    mb = [f for f in bad if f.code == "MB001"]
    assert mb, [(f.code, f.severity, f.message) for f in bad]
    assert all(f.severity == Severity.ERROR or "returned by `block_for`" in f.message for f in mb)


@pytest.mark.parametrize(
    "helper",
    [_MAY_RAISE, _UNDECIDED_CONTINUE, _UNKNOWN_ITEMS],
    ids=["may-raise", "undecided-continue", "unknown-items"],
)
def test_what_the_search_does_not_establish_stays_a_noted_stand_in(helper: str) -> None:
    notes = _notes(_check(helper))
    assert any("BLOCK" in m and "block_for" in m for m in notes), notes


# ---- an item of a helper's unknown result, or a fallback (liger's Ascend tiling) -------------

_TILING = """
import torch
import triton
import triton.language as tl
from other_library import get_core_count


def compute_tiling(shapes):
    budget = get_core_count()
    return [(64,)] if budget > shapes[0][0] else None


@triton.jit
def rows_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, D, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * D + cols, mask=cols < {bound})
        tl.store(y_ptr + row * D + cols, v * 2.0, mask=cols < D)


def launch(x):
    T, D = x.shape
    y = torch.empty_like(x)
    tiles = compute_tiling(shapes=((D,),))
    if tiles is not None and len(tiles) > 0:
        BLOCK = tiles[0][0]
    else:
        BLOCK = {fallback}
    rows_kernel[(T,)](x, y, D, BLOCK=BLOCK)
    return y
"""


def _tiling(fallback: str, bound: str = "D") -> list:
    return check_source(_TILING.format(fallback=fallback, bound=bound), "rows.py")


@pytest.mark.parametrize("fallback", ["2048", "triton.next_power_of_2(D)"])
def test_a_tiling_item_or_its_fallback_is_a_named_pick(fallback: str) -> None:
    findings = _tiling(fallback)
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]
    bad = _tiling(fallback, bound="D + 1")
    mb = [f for f in bad if f.code == "MB001"]
    assert mb and all(f.severity == Severity.ERROR or "`compute_tiling`" in f.message for f in mb), [
        (f.code, f.severity, f.message) for f in bad
    ]


def test_a_fallback_that_is_no_number_keeps_the_stand_in() -> None:
    notes = _notes(_tiling("'auto'"))
    assert any("BLOCK" in m for m in notes), notes


# ---- `continue` and `break` of a search (fla's Ascend tile searches) ----------------------------

_PAIR_SOURCE = """
import torch
import triton
import triton.language as tl

_BK_CANDIDATES = (128, 64, 32, 16)
_BV_CANDIDATES = (128, 64, 32, 16)
_BUDGET = 196608


def _peak_bytes(BK, BV):
    return BK * BV * 4 * 4


def _get_tiles(K, V):
    budget = int(_BUDGET * 0.8)
    k_cap = min(128, triton.next_power_of_2(K))
    v_cap = min(128, triton.next_power_of_2(V))
    for BK in _BK_CANDIDATES:
        if k_cap < BK:
            continue
        for BV in _BV_CANDIDATES:
            if v_cap < BV:
                {skip}
            if _peak_bytes(BK, BV) <= budget:
                return BK, BV
    return 16, 16


@triton.jit
def hk_kernel(h, o, K, V, BK: tl.constexpr, BV: tl.constexpr):
    i_k, i_v = tl.program_id(0), tl.program_id(1)
    o_k = i_k * BK + tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    m = (o_k[:, None] < K) & (o_v[None, :] < {bound})
    b_h = tl.load(h + o_k[:, None] * V + o_v[None, :], mask=m, other=0.)
    tl.store(o + o_k[:, None] * V + o_v[None, :], b_h * 2, mask=m)


def hk(h):
    K, V = h.shape
    o = torch.empty_like(h)
    BK, BV = _get_tiles(K, V)
    hk_kernel[(triton.cdiv(K, BK), triton.cdiv(V, BV))](h, o, K, V, BK, BV)
    return o
"""


def _pair(skip: str = "continue", bound: str = "V") -> list:
    return check_source(_PAIR_SOURCE.format(skip=skip, bound=bound), "hk.py")


def test_a_search_that_skips_items_with_continue_gives_the_pair_it_returns() -> None:
    findings = _pair()
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]


def test_an_off_by_one_mask_is_found_through_a_pair_the_search_returns() -> None:
    bad = _pair(bound="V + 1")
    mb = [f for f in bad if f.code == "MB001"]
    assert mb and mb[0].severity == Severity.ERROR, [(f.code, f.severity, f.message) for f in bad]


def test_a_break_ends_the_inner_search_as_python_does() -> None:
    """`break` instead of `continue`: for V below 128 the inner search ends at its first item
    and the outer one goes on to a smaller BK, until the fallback (16, 16): still a value the
    code gives, so no note."""
    findings = _pair(skip="break")
    assert not _notes(findings), _notes(findings)
    assert not _failing(findings), [(f.code, f.message) for f in findings]
