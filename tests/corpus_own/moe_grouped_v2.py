import sys

import torch
import triton
import triton.language as tl


@triton.jit
def grouped_expert_gemm(
    x_ptr, w_ptr, y_ptr, expert_start_ptr,
    N, K,
    stride_xt, stride_we, stride_wn, stride_wk, stride_yt,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Rows of x are grouped by expert: rows expert_start[e] .. expert_start[e + 1] - 1 belong
    to expert e and go through W[e] (N, K): y = x @ W[e]^T. Tiles past a group's end exit."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.program_id(2)
    start = tl.load(expert_start_ptr + e)
    end = tl.load(expert_start_ptr + e + 1)
    row0 = start + pid_m * BLOCK_M
    if row0 >= end:
        return
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < end
    col_ok = cols < N
    w_base = w_ptr + e.to(tl.int64) * stride_we

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_xt + ks[None, :],
                    mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_base + cols[None, :].to(tl.int64) * stride_wn + ks[:, None] * stride_wk,
                    mask=col_ok[None, :] & k_ok[:, None], other=0.0)
        acc = tl.dot(x, w, acc)

    y_ptrs = y_ptr + rows[:, None].to(tl.int64) * stride_yt + cols[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=col_ok[None, :])  # expect: MB002  # also: GR002


def grouped_gemm(x, w, expert_start, out=None, BLOCK_M=16, BLOCK_N=32, BLOCK_K=32):
    """x: (T, K) rows sorted by expert; w: (E, N, K); expert_start: (E + 1,) int32 prefix sums of
    the group sizes (expert_start[0] = 0, expert_start[E] = T)."""
    T, K = x.shape
    E, N, K2 = w.shape
    assert K == K2 and x.stride(1) == 1 and expert_start.numel() == E + 1
    if out is None:
        out = torch.empty((T, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(T, BLOCK_M), triton.cdiv(N, BLOCK_N), E)
    grouped_expert_gemm[grid](
        x, w, out, expert_start, N, K,
        x.stride(0), w.stride(0), w.stride(1), w.stride(2), out.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out


def reference(x, w, expert_start):
    out = torch.zeros(x.shape[0], w.shape[1])
    for e in range(w.shape[0]):
        lo, hi = int(expert_start[e]), int(expert_start[e + 1])
        out[lo:hi] = x[lo:hi].float() @ w[e].float().T
    return out.to(x.dtype)


if __name__ == "__main__":
    import _check as c

    def case(sizes, N, K):
        sizes = torch.tensor(sizes, dtype=torch.int32)
        start = torch.zeros(len(sizes) + 1, dtype=torch.int32)
        start[1:] = torch.cumsum(sizes, 0)
        T = int(start[-1])
        x = c.padded(torch.randn(T, K).half(), col_pad=8)
        w = c.padded(torch.randn(len(sizes), N, K).half() * 0.3)
        out = c.poisoned((T, N), torch.float16)
        grouped_gemm(x, w, c.padded(start), out=out)
        return c.close("y", out, reference(x, w, start), atol=2e-2, rtol=2e-2, rel_norm=1e-3)

    c.main(case, [((1,), 8, 16), ((5, 0, 17, 3), 40, 48), ((0, 33, 16), 32, 32), ((2, 2, 2, 2, 2), 16, 70)])
