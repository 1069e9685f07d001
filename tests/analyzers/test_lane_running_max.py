"""A running max kept per lane (`m_new = tl.maximum(inp, m)`) is a max (interp/ops_math.py,
falsefix). gcu300's `log_softmax_kernel` keeps a tile of running maxima, shifts every exp by
it (`z = z * tl.exp(m - m_new) + tl.exp(inp - m_new)`) and reduces it with `tl.max(m, 1)` at
the end; the elementwise maximum of two tiles neither of which was a max was given no max
token, so the shift was taken for none (a false NU003). An exp left unshifted is still found."""

from __future__ import annotations

from argus.analyzers import check_source

_LSE = """
import torch
import triton
import triton.language as tl


@triton.jit
def lse_kernel(out_ptr, in_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    m = tl.load(in_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N),
                other=-float("inf")).to(tl.float32)
    z = tl.where(m == float("-inf"), 0.0, 1.0)
    for start in range(BLOCK_N, N, BLOCK_N):
        c = start + cols
        inp = tl.load(in_ptr + rows[:, None] * N + c[None, :], mask=(rows[:, None] < M) & (c[None, :] < N),
                      other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(inp, m)
        z = z * tl.exp(m - m_new) + tl.exp({shifted})
        m = m_new
    m_row = tl.max(m, 1)
    z = tl.sum(z * tl.exp(m - m_row[:, None]), 1)
    tl.store(out_ptr + rows, m_row + tl.log(z), mask=rows < M)


def lse(x):
    M, N = x.shape
    out = torch.empty((M,), device=x.device, dtype=torch.float32)
    lse_kernel[(triton.cdiv(M, 16),)](out, x, M, N, BLOCK_M=16, BLOCK_N=64)
    return out
"""


def _codes(shifted: str) -> list[str]:
    return [f.code for f in check_source(_LSE.format(shifted=shifted), "t.py")]


def test_exps_shifted_by_a_per_lane_running_max_are_stable() -> None:
    assert "NU003" not in _codes("inp - m_new")


def test_an_unshifted_exp_is_still_found() -> None:
    assert "NU003" in _codes("inp")
