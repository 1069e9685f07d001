"""`tl.program_id(1)` on a 1-D grid is always 0 (GR003). Where the launch still writes every
element of every output, each by one plain store, the kernel does its work with that axis at 0
(flag-gems' Ascend `mm_kernel`: `rk = pid_z * BLOCK_K + ...` with one K split, the K loop
covering the rest), and no GR003 is reported (interp/interpreter.py `finish`, falsefix). An
output the missing axis leaves unwritten keeps the GR003 (the corpora's seeded grids)."""

from __future__ import annotations

from argus.analyzers import check_source

_SPLIT = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, K, stride_m, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    pid_z = tl.program_id(1)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.load(x_ptr + row * stride_m + rk, mask=rk < K, other=0.0)
        rk += BLOCK_K
    tl.store(out_ptr + row{col}, tl.sum(acc, axis=0))


def row_sum(x):
    M, K = x.shape
    out = torch.empty((M{extra},), device=x.device, dtype=torch.float32)
    row_sum_kernel[(M,)](x, out, M, K, x.stride(0), BLOCK_K=32)
    return out
"""


def _codes(col: str = "", extra: str = "") -> list[str]:
    return [f.code for f in check_source(_SPLIT.format(col=col, extra=extra), "t.py")]


def test_an_always_0_axis_that_leaves_no_output_unwritten_is_not_reported() -> None:
    assert "GR003" not in _codes()


def test_an_always_0_axis_that_leaves_an_output_unwritten_is_reported() -> None:
    # out has 2 * M elements, the programs of the missing axis would write the second half
    assert "GR003" in _codes(col=" + pid_z * M", extra=" * 2")
