"""A max over a row that holds only undefined lanes and the -inf a `tl.where` put in is
garbage of that row alone, not garbage mixed with data (interp/ops_reduce.py, fgprec6).

flag-gems' flash_mla loads the query rows of the heads past H without `other=`; in the last
key block the masked-off keys are set to -inf, so those rows meet the max with -inf beside
their garbage, and MB004 said "undefined lanes reach `tl.max` together with real data". The
rows are stored under the head mask. A row where the garbage meets a loaded value stays MB004.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_ROWS = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, o_ptr, H, N, BH: tl.constexpr, BN: tl.constexpr):
    h = tl.arange(0, BH)
    n = tl.arange(0, BN)
    mask_h = h < H
    mask_n = n < N
    x = tl.load(x_ptr + h[:, None] * N + n[None, :], mask={load_mask})
    s = tl.where(mask_n[None, :], x, float("-inf"))
    m = tl.max(s, 1)
    tl.store(o_ptr + h, m, mask=mask_h)


def row_max(x):
    H, N = x.shape
    o = torch.empty((H,), device=x.device, dtype=x.dtype)
    row_max_kernel[(1,)](x, o, H, N, BH=triton.next_power_of_2(H), BN=triton.next_power_of_2(N))
    return o
"""


def _mb004(load_mask: str) -> list[tuple[int, Severity]]:
    text = _ROWS.format(load_mask=load_mask)
    return [(f.line, f.severity) for f in check_source(text, "t.py") if f.code == "MB004"]


_MAX_LINE = next(i for i, line in enumerate(_ROWS.splitlines(), 1) if "tl.max" in line)


def test_rows_of_garbage_beside_the_filled_neg_inf_are_not_mixed_with_data() -> None:
    """Rows past H are undefined wherever a key is valid and -inf elsewhere: no real value."""
    assert _mb004("mask_h[:, None] & mask_n[None, :]") == []


def test_garbage_that_meets_a_loaded_value_in_its_row_stays_found() -> None:
    """The seeded bug: columns past N + 1 are masked off at the load but kept by the `where`,
    so a real row reduces its data together with undefined lanes."""
    assert (_MAX_LINE, Severity.WARNING) in _mb004("mask_h[:, None] & (n[None, :] < N - 1)")
