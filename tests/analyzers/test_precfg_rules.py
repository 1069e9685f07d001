"""Issue 12, flag-gems' false findings (branch `precfg`): a program storing again the very value
another program stored (wrapped tail lanes, GR002), ... Each correct form is clean; the seeded
bug of the same shape stays found."""

from __future__ import annotations

from argus.analyzers import Severity, check_source


def _bad(text: str) -> list[str]:
    findings = check_source(text, "t.py")
    return [
        f.code for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"
    ]


_WRAPPED_TAIL = """
import torch
import triton
import triton.language as tl


@triton.jit
def nearest_up(out_ptr, in_ptr, OH, OW, IH, IW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    ow = idx % OW
    oh = idx // OW % OH
    ih = tl.minimum(oh * IH // OH, IH - 1)
    iw = tl.minimum(ow * IW // OW, IW - 1)
    x = tl.load(in_ptr + ih * IW + iw)
    tl.store(out_ptr + oh * OW + ow, {value})


def up(x, OH, OW):
    IH, IW = x.shape
    out = torch.empty((OH, OW), device=x.device, dtype=x.dtype)
    nearest_up[({programs},)](out, x, OH, OW, IH, IW, BLOCK=64)
    return out
"""


def test_wrapped_tail_lanes_storing_the_same_value_are_not_a_race() -> None:
    """flag-gems' `upsample_nearest2d`: no mask, `idx // OW % OH` wraps the last program's lanes
    onto rows program 0 stores, with the value read from the same input element."""
    assert _bad(_WRAPPED_TAIL.format(value="x", programs="triton.cdiv(OH * OW, 64)")) == []


def test_wrapped_lanes_storing_a_value_of_their_own_program_stay_a_race() -> None:
    """The seeded bug: the wrapped lanes store a value that depends on their program (here its
    id added in), so the element ends with whichever program lands last."""
    assert "GR002" in _bad(_WRAPPED_TAIL.format(value="x + pid", programs="triton.cdiv(OH * OW, 64)"))


def test_one_program_too_many_storing_partial_values_stays_a_race() -> None:
    """Programs past the data that load other input rows than the first program (`ih` shifted
    by the program) write different values to the same element: a race."""
    src = _WRAPPED_TAIL.replace(
        "x = tl.load(in_ptr + ih * IW + iw)", "x = tl.load(in_ptr + ((ih + pid) % IH) * IW + iw)"
    )
    assert "GR002" in _bad(src.format(value="x", programs="triton.cdiv(OH * OW, 64)"))


_BMM = """
import torch
import triton
import triton.language as tl


@triton.jit
def bmm_k(A, B, O, M, N, K, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    pid_b = tl.program_id(2)
    A += pid_b * M * K
    B += pid_b * K * N
    O += pid_b * M * N
    offs_m = tl.program_id(0) * TM + tl.arange(0, TM)
    offs_n = tl.program_id(1) * TN + tl.arange(0, TN)
    offs_k = tl.arange(0, TK)
    a_ptrs = A + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = B + {b_row}[:, None] * N + offs_n[None, :]
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for _ in range(tl.cdiv(K, TK)):
        mask_k = offs_k < K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & mask_k[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=mask_k[:, None] & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        offs_k += TK
        a_ptrs += TK
        b_ptrs += TK * N
    o_ptrs = O + offs_m[:, None] * N + offs_n[None, :]
    tl.store(o_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm(A, B):
    batch, M, K = A.shape
    _, _, N = B.shape
    out = torch.empty((batch, M, N), dtype=A.dtype, device=A.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16), batch)
    bmm_k[grid](A, B, out, M, N, K, TM=16, TN=16, TK=16)
    return out
"""


def test_unnamed_rows_walked_by_an_index_bounded_by_k_are_k() -> None:
    """flag-gems' `bmm`/`baddbmm`: `_, _, N = B.shape`; B's rows are walked by `offs_k`, which
    the kernel bounds by `K` (A's named axis): B is (batch, K, N), not the (batch, M, N) that a
    join by position with A gave (a false MB001 and DF001)."""
    assert _bad(_BMM.format(b_row="offs_k")) == []


def test_reading_one_row_past_k_of_the_unnamed_axis_is_still_found() -> None:
    """The seeded bug: B's rows read one past the row `offs_k` names, off the end of B."""
    assert "MB001" in _bad(_BMM.format(b_row="(offs_k + 1)"))


_TAKE = """
import torch
import triton
import triton.language as tl


@triton.jit
def take_k(in_ptr, idx_ptr, out_ptr, n_index, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_index
    idx = tl.load(idx_ptr + offs, mask=m, other=0)
    vals = tl.load(in_ptr + idx, mask=m, other=0.0)
    tl.store(out_ptr + offs, vals, mask=m)


def launch_take(x, index_flat, out_flat):
    n_index = index_flat.numel()
    take_k[(triton.cdiv(n_index, 128),)](x, index_flat, out_flat, n_index, BLOCK=128)
"""


def test_a_gather_into_an_output_of_unknown_layout_is_not_a_scatter_mismatch() -> None:
    """flag-gems' `take`, `masked_scatter`, `_mthreads` gather: `out[i] = x[idx[i]]` into an
    output the launcher never describes; its coordinates are a stand-in, so nothing says the
    output is not addressed by the index's own position (main: DF004)."""
    assert "DF004" not in _bad(_TAKE)


_SCATTER_BACK = """
import torch
import triton
import triton.language as tl


@triton.jit
def unpermute(x_ptr, ids_ptr, out_ptr, P, D: tl.constexpr, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    d = tl.arange(0, D)
    m = p < P
    tok = tl.load(ids_ptr + p, mask=m, other=0)
    rows = tl.load(x_ptr + tok[:, None] * D + d[None, :], mask=m[:, None], other=0.0)
    tl.store(out_ptr + {dest}[:, None] * D + d[None, :], rows, mask=m[:, None])


def run(x, ids):
    T, D = x.shape
    (P,) = ids.shape
    out = torch.empty((T, D), device=x.device, dtype=x.dtype)
    unpermute[(triton.cdiv(P, 16),)](x, ids, out, P, D=D, BLOCK=16)
    return out
"""


def test_rows_scattered_back_through_their_ids_are_clean() -> None:
    assert "DF004" not in _bad(_SCATTER_BACK.format(dest="tok"))


def test_rows_stored_at_their_sorted_position_in_a_sized_output_stay_found() -> None:
    """The seeded bug: rows gathered by token id, stored at the position in the id list in an
    output the launcher sizes by tokens."""
    assert "DF004" in _bad(_SCATTER_BACK.format(dest="p"))


_SEARCH = """
import torch
import triton
import triton.language as tl


@triton.jit
def search_k(x_ptr, sorted_ptr, out_ptr, M, N, LOG_N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < M
    x = tl.load(x_ptr + i, mask=mask)
    found = tl.zeros((BLOCK,), dtype=tl.int1)
    start = tl.zeros((BLOCK,), dtype=tl.int32)
    end = start + N
    live = start < end
    for _ in range(LOG_N):
        mid = tl.where(live, start + (end - start) // 2, 0)
        mid_val = tl.load(sorted_ptr + mid, mask=live)
        found = {found}
        start = tl.where(live and (mid_val < x), mid + 1, start)
        end = tl.where(live and (mid_val > x), mid, end)
        live = start < end
    tl.store(out_ptr + i, found, mask=mask)


def isin(x, s):
    (M,) = x.shape
    (N,) = s.shape
    out = torch.empty((M,), device=x.device, dtype=torch.bool)
    search_k[(triton.cdiv(M, 64),)](x, s, out, M, N, LOG_N=max(N, 1).bit_length(), BLOCK=64)
    return out
"""


def test_a_defined_false_decides_an_and_with_an_undefined_lane() -> None:
    """flag-gems' `isin_by_search` (7 backends): `mid_val` is loaded under `live`, without
    `other=`; `live and (mid_val < x)` is False wherever `live` is, whatever `mid_val` holds,
    so no undefined lane reaches the stored result (main: MB004)."""
    assert "MB004" not in _bad(_SEARCH.format(found="tl.where(live, found or (mid_val == x), found)"))


def test_an_undefined_lane_that_decides_the_result_is_still_found() -> None:
    """The seeded bug: the `found` update no longer keeps the dead lanes' value, so the
    undefined `mid_val` of a finished lane decides what is stored."""
    assert "MB004" in _bad(_SEARCH.format(found="found | (mid_val == x)"))
