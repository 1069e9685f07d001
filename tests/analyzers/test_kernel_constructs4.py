"""Kernel-side constructs behind the AR001 groups left after `kcov3` (branch `kcov4`): Triton's
integer promotion (the narrow integers of a radix sort stay narrow, so their bitcasts keep
their width) and a Triton random function bound to a module name inside `try:`. Each kernel is
analyzed through the construct; a seeded bug past it is found and the correct kernel is clean."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from argus.analyzers.interp.ops_core import int_promote, promote
from argus.analyzers.interp.values import Val, scalar
from kernel_checks import codes, failing, not_modelled


def tile(dtype: str) -> Val:
    return Val(np.zeros((4,), dtype=np.int64), dtype)


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ("int16", "int16", "int16"),  # the same type stays (it used to become int32)
        ("int8", "int16", "int16"),
        ("uint16", "int32", "int32"),  # signed and wider wins
        ("uint32", "int32", "uint32"),  # same width: unsigned
        ("uint64", "uint64", "uint64"),
        ("int64", "uint32", "int64"),
        ("int1", "int1", "int1"),
        ("int1", "int8", "int8"),
        ("int1", "uint16", "uint16"),
    ],
)
def test_integer_promotion_follows_triton(a: str, b: str, out: str) -> None:
    assert int_promote(a, b) == out
    assert int_promote(b, a) == out
    assert promote(tile(a), tile(b)) == out


def test_a_python_number_beside_a_tensor() -> None:
    """A scalar of a lower or equal kind takes the tensor's type; a bool tensor is promoted by
    an integer, any integer tensor by a float."""
    op = ast.BitOr()
    assert promote(scalar(32768, constexpr=True), tile("uint16"), op) == "uint16"
    assert promote(tile("int8"), scalar(3, constexpr=True), op) == "int8"
    assert promote(scalar(1, constexpr=True), tile("int1"), op) == "int32"
    assert promote(tile("int16"), scalar(0.5, constexpr=True), op) == "fp32"


# flag-gems' radix sort: order-preserving keys of fp16 data in 16-bit integers
RADIX_KEYS = """
@triton.jit
def order_keys_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    sx = x.to(tl.int16, bitcast=True)
    ux = x.to(tl.uint16, bitcast=True)
    shift = tl.full((), value=15, dtype=tl.int16)
    flip = 32768 | (sx >> shift).to(tl.uint16, bitcast=True)
    key = (ux ^ flip).to(tl.int16, bitcast=True)
    tl.store(y_ptr + offs, key, mask=offs < n)


def order_keys(x):
    (n,) = x.shape
    y = torch.empty((n,), dtype=torch.int16, device=x.device)
    order_keys_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
"""


def test_narrow_integers_keep_their_width_through_bitcasts() -> None:
    assert not_modelled(RADIX_KEYS) == []
    assert failing(RADIX_KEYS) == []
    assert codes(
        RADIX_KEYS.replace("y_ptr + offs, key, mask=offs < n", "y_ptr + offs, key, mask=offs <= n")
    ) == {"MB002"}
    assert "MB001" in codes(
        RADIX_KEYS.replace("x_ptr + offs, mask=offs < n", "x_ptr + offs + 1, mask=offs < n")
    )


def test_a_bitcast_between_widths_is_still_refused() -> None:
    """Triton refuses a bitcast between widths: one the promotion really makes (int16 widened
    by a 32-bit tensor) is still not modelled, never guessed."""
    wide = RADIX_KEYS.replace(
        "shift = tl.full((), value=15, dtype=tl.int16)", "shift = tl.full((), value=15, dtype=tl.int32)"
    )
    assert any("a bitcast from int32 to uint16 (different widths)" in m for m in not_modelled(wide))


# flag-gems' random utilities: Triton's own function where it has it, a copy otherwise
RANDOM_ALIAS = """
try:
    to_unit = tl.uint_to_uniform_float
except AttributeError:
    to_unit = None


@triton.jit
def uniform_kernel(out_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    hi, lo, _, _ = tl.randint4x(seed, offs)
    wide = (hi.to(tl.uint64) << 32) | lo.to(tl.uint64)
    u = to_unit(wide)
    tl.store(out_ptr + offs, u, mask=offs < n)


def uniform(n, seed):
    out = torch.empty((n,), dtype=torch.float32, device="cuda")
    uniform_kernel[(triton.cdiv(n, 256),)](out, n, seed, BLOCK=256)
    return out
"""


def test_a_random_function_bound_inside_try() -> None:
    assert not_modelled(RANDOM_ALIAS) == []
    assert failing(RANDOM_ALIAS) == []
    assert codes(RANDOM_ALIAS.replace("mask=offs < n)", "mask=offs < n + 1)")) == {"MB002"}


# fla-core's grpo: `loss_ptr + M` stores the second half; `loss_ptr` alone is an address
# elsewhere, so `M` is an offset, never a second pointer (Triton refuses pointer + pointer)
SECOND_HALF = """
@triton.jit
def halves_kernel(x_ptr, loss_ptr, M, SAVE: tl.constexpr):
    row = tl.program_id(0)
    loss_ptr += row
    x = tl.load(x_ptr + row)
    tl.store(loss_ptr, x)
    if SAVE:
        tl.store(loss_ptr + M, x * 2)
"""


def test_an_offset_beside_a_known_pointer_is_not_a_pointer() -> None:
    assert not any("adding two pointers" in m for m in not_modelled(SECOND_HALF))
    # the multiplied name of an address is an offset too (`abs_row * stride`, ROW_OFFSET added)
    scaled = SECOND_HALF.replace("tl.store(loss_ptr + M, x * 2)", "tl.store(loss_ptr + (row + M) * 2, x * 2)")
    assert not any("pointer arithmetic" in m or "two pointers" in m for m in not_modelled(scaled))


# flag-gems' nonzero: `inp != 0` of a tensor, which the launcher evaluation reads as a bool; the
# kernel loads through that parameter alone, so a tensor was passed there (Triton loads from
# pointers only): a stand-in of unstated extent, the rest of the launch judged as usual
LOST_TENSOR = """
@triton.jit
def flag_kernel(flags_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    f = tl.load(flags_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, f.to(tl.int32), mask=offs < n)


def flags_of(inp):
    n = inp.numel()
    flags = inp != 0
    out = torch.empty((n,), dtype=torch.int32, device=inp.device)
    flag_kernel[(triton.cdiv(n, 128),)](flags, out, n, BLOCK=128)
    return out
"""


def test_a_number_bound_where_the_kernel_reads_memory() -> None:
    assert not any("a load from Val" in m for m in not_modelled(LOST_TENSOR))
    assert failing(LOST_TENSOR) == []
    assert codes(
        LOST_TENSOR.replace(
            "out_ptr + offs, f.to(tl.int32), mask=offs < n", "out_ptr + offs, f.to(tl.int32), mask=offs <= n"
        )
    ) == {"MB002"}


# flag-gems' randperm: the sentinel of an integer sort picked by dtype, `raise` for any other
# (Triton's code generator has no `raise`: reached, it fails the compile). The launcher does not
# give the keys' dtype, and the probe's float guess reaches the `raise`: typed as integers, the
# kernel compiles and is judged
SENTINEL_BY_DTYPE = """
@triton.jit
def _largest(dtype):
    if dtype is tl.int64:
        return 9223372036854775807
    elif dtype is tl.int32:
        return 2147483647
    else:
        raise ValueError("Unknown dtype")


@triton.jit
def keys_min_kernel(keys_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    big = _largest(keys_ptr.dtype.element_ty)
    k = tl.load(keys_ptr + cols, mask=cols < n, other=big)
    tl.store(out_ptr + cols, k, mask=cols < n)


def keys_min(keys):
    n = keys.numel()
    out = torch.empty_like(keys)
    keys_min_kernel[(1,)](keys, out, n, BLOCK=triton.next_power_of_2(n))
    return out
"""


def test_a_raise_reached_through_a_guessed_dtype_retypes_it() -> None:
    assert not_modelled(SENTINEL_BY_DTYPE) == []
    assert failing(SENTINEL_BY_DTYPE) == []
    assert codes(
        SENTINEL_BY_DTYPE.replace("out_ptr + cols, k, mask=cols < n", "out_ptr + cols, k, mask=cols <= n")
    ) == {"MB002"}


def test_a_raise_the_sizes_reach_stays_unmodelled() -> None:
    """No guessed dtype on the way: the probe's own picks reach it, and nothing is judged past it."""
    sized = SENTINEL_BY_DTYPE.replace(
        "big = _largest(keys_ptr.dtype.element_ty)", "big = _largest(tl.float32)"
    )
    assert any("the statement `Raise`" in m for m in not_modelled(sized))


# liger-kernel's sparsemax, fla-core's attention: two dimensions whose blocks the launcher caps
# (`min(64, next_power_of_2(M))`, `min(1024, next_power_of_2(N))`). The `big` probe sizes each
# past twice its cap (129 x 2051), not 4097 x 4099: that product was past the probe's budget,
# so the kernel went unjudged
CAPPED_TILES = """
@triton.jit
def scale_tiles_kernel(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], a * 2.0, mask=mask)


def scale_tiles(a):
    M, N = a.shape
    c = torch.empty_like(a)
    BLOCK_M = min(64, triton.next_power_of_2(M))
    BLOCK_N = min(1024, triton.next_power_of_2(N))
    scale_tiles_kernel[(triton.cdiv(M, BLOCK_M),)](a, c, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return c
"""


def test_the_big_probe_stays_within_the_budget() -> None:
    assert not any("probe (" in m for m in not_modelled(CAPPED_TILES)), not_modelled(CAPPED_TILES)
    assert failing(CAPPED_TILES) == []
    assert "MB002" in codes(CAPPED_TILES.replace("& (cols[None, :] < N)", "& (cols[None, :] <= N)"))


# flag-gems' radix-sort scatter: a rank from `tl.cumsum(key == b)` over a masked load; the
# padding lanes (past the data, holding 1) come after every real lane, and a scan carries
# forward only, so no real rank changes. A reverse scan brings them in front: that one counts
RANK_SCAN = """
@triton.jit
def rank_kernel(key_ptr, rank_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    key = tl.load(key_ptr + offs, mask=offs < n, other=0)
    rank = tl.cumsum((key == 0).to(tl.int32), axis=0) - 1
    tl.store(rank_ptr + offs, rank, mask=offs < n)


def ranks(key):
    n = key.numel()
    rank = torch.empty((n,), dtype=torch.int32, device=key.device)
    rank_kernel[(1,)](key, rank, n, BLOCK=triton.next_power_of_2(n))
    return rank
"""


def test_padding_after_the_data_does_not_reach_a_scan() -> None:
    assert failing(RANK_SCAN) == []
    assert "DF003" in codes(RANK_SCAN.replace("axis=0) - 1", "axis=0, reverse=True) - 1"))
