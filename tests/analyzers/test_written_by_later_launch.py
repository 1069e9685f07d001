"""A later launch of the same launcher that writes into an output (model/launch_later.py,
falsefix). gcu300's `masked_select` allocates `part_sums` of `np + 1` elements; its first kernel
writes `np` of them and the next launch writes `part_sums[np]` before the host reads it. GR001
judged the first kernel alone ("1 of 2 elements never written"). The code does not establish
that the first kernel must write it whole, so its coverage is not judged; a later kernel that
only reads the buffer leaves the judgment as it was (the seeded short grid is still found)."""

from __future__ import annotations

from argus.analyzers import check_source

_TWO = """
import torch
import triton
import triton.language as tl


@triton.jit
def part_sum_kernel(x_ptr, sums_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0)
    tl.store(sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def total_kernel(sums_ptr, res_ptr, n, NP: tl.constexpr):
    mask = tl.arange(0, NP) < n
    parts = tl.load(sums_ptr + tl.arange(0, NP), mask=mask, other=0)
    tl.store({target}, tl.sum(parts, axis=0))


def total(x, out):
    N = x.numel()
    n = triton.cdiv(N, 128)
    sums = torch.empty(n + 1, dtype=torch.int32, device=x.device)
    part_sum_kernel[(n,)](x, sums, N, BLOCK=128)
    total_kernel[(1,)](sums, out, n, NP=triton.next_power_of_2(n))
    out.add_(sums[-1])
    return out
"""


def _codes(target: str) -> list[str]:
    return [f.code for f in check_source(_TWO.format(target=target), "t.py")]


def test_the_element_a_later_launch_writes_is_not_uncovered() -> None:
    assert "GR001" not in _codes("sums_ptr + n")


def test_a_later_kernel_that_only_reads_the_buffer_leaves_it_judged() -> None:
    # the second kernel writes its total into `out`: `sums[n]` is written by no launch
    assert "GR001" in _codes("res_ptr")
