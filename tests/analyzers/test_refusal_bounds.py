"""A helper's refusal under a test the evaluator cannot decide (refusal_bounds.py): fla's
Ascend `_get_layer_norm_gated_tiles` sizes `BD` from the device's buffer and raises when the
row does not fit (`if D > BD: raise`). The launches that happen have `BD >= D`, so the kernel
is judged with a picked tile that meets the bound (before: the helper's value was "no value",
the kernel an AR001). The bound is what keeps the pick honest: without the refusal the pick
(32) is below a 48-wide row and the columns past it are never written, a hint naming the pick;
with it the pick is 64 and nothing is reported."""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.refusal_bounds import AtLeast, least_tile

_SRC = """
import torch
import triton
import triton.language as tl
from some_npu_lib import ub_capacity


def _ub_block(D: int) -> int:
    tiles = ub_capacity()
    block = min(triton.next_power_of_2(D), tiles[0]) if tiles else triton.next_power_of_2(D)
    return max(1, block)


def _get_tiles(D: int) -> int:
    BD = _ub_block(D)
{guard}
    return BD


@triton.jit
def scale_rows_kernel(x, y, T, D: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    cols = tl.arange(0, BD)
    m = cols < D
    b_x = tl.load(x + i_t * D + cols, mask=m, other=0.)
    tl.store(y + i_t * D + cols, b_x * 2, mask={store_mask})


def scale_rows(x: torch.Tensor):
    {sizes}
    y = torch.empty_like(x)
    BD = _get_tiles(D)
    scale_rows_kernel[(T,)](x, y, T, D, BD)
    return y
"""

_REFUSAL = """    if D > BD:
        raise RuntimeError(f"feature dim {D} exceeds the UB-safe block {BD}")"""
_FLIPPED = """    if BD < D:
        raise RuntimeError("row too wide")"""
_SHAPE = "T, D = x.shape"
_FIXED = "T = x.shape[0]\n    D = 48\n    x = x.view(T, D)"


def _check(guard: str = _REFUSAL, store_mask: str = "m", sizes: str = _SHAPE) -> list:
    return check_source(_SRC.format(guard=guard, store_mask=store_mask, sizes=sizes), "rows.py")


def _shown(findings: list) -> list:
    return [(f.code, f.severity, f.message) for f in findings]


@pytest.mark.parametrize("guard", [_REFUSAL, _FLIPPED], ids=["D > BD", "BD < D"])
@pytest.mark.parametrize("sizes", [_SHAPE, _FIXED], ids=["shape", "fixed-48"])
def test_a_refused_row_width_bounds_the_picked_tile(guard: str, sizes: str) -> None:
    findings = _check(guard=guard, sizes=sizes)
    assert not findings, _shown(findings)


def test_without_the_refusal_the_pick_stays_below_a_wide_row() -> None:
    findings = _check(guard="", sizes=_FIXED)
    gr = [f for f in findings if f.code == "GR001"]
    assert gr and all(f.severity == Severity.HINT for f in gr), _shown(findings)
    assert "`BD` (returned by `_get_tiles`, not computable here) = 32" in gr[0].message


def test_a_store_past_the_row_is_found_through_the_bounded_pick() -> None:
    findings = _check(store_mask="cols < D + 1")
    assert [f for f in findings if f.code == "MB002" and f.severity == Severity.ERROR], _shown(findings)


def test_a_refusal_on_a_test_it_cannot_read_keeps_the_note() -> None:
    """`if D > BD and ub_capacity(): raise`: not a plain comparison, so the helper's value is
    still unknown on this path, as before."""
    findings = _check(guard="    if D > BD and ub_capacity():\n        raise RuntimeError('no')")
    assert any(f.code == "AR001" and "BD" in f.message for f in findings), _shown(findings)


def test_least_tile_meets_the_bound_with_a_power_of_two() -> None:
    assert least_tile(AtLeast("h", 48), 32) == 64
    assert least_tile(AtLeast("h", 48), 16) == 64
    assert least_tile(AtLeast("h", 7), 32) == 32
    assert least_tile(AtLeast("h", 64), 32) == 64
    assert least_tile(Opaque("h"), 32) == 32
