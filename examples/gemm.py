"""A small fp16 GEMM in Triton, C = A @ B with fp32 accumulation: the Argus quick-start example.

`argus check examples/gemm.py` passes. Compare with `gemm_stale_b.py`, which differs in one line.
Nothing here runs when Argus checks it; `python examples/gemm.py` on a GPU runs a self-test.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    TILE_M: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr,
):
    row_block = tl.program_id(0)
    col_block = tl.program_id(1)
    rows = row_block.to(tl.int64) * TILE_M + tl.arange(0, TILE_M)
    cols = col_block.to(tl.int64) * TILE_N + tl.arange(0, TILE_N)
    ks = tl.arange(0, TILE_K)

    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    total = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, TILE_K)):
        k_left = K - step * TILE_K
        a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        total += tl.dot(a, b)
        a_tile += TILE_K * stride_ak
        b_tile += TILE_K * stride_bk

    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, total.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def gemm(a: torch.Tensor, b: torch.Tensor, tile_m: int = 64, tile_n: int = 64, tile_k: int = 32) -> torch.Tensor:
    M, K = a.shape
    K_b, N = b.shape
    assert K == K_b, "inner dimensions differ"
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, tile_m), triton.cdiv(N, tile_n))
    gemm_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        TILE_M=tile_m, TILE_N=tile_n, TILE_K=tile_k,
    )
    return c


if __name__ == "__main__":
    for m, n, k in [(64, 64, 64), (127, 65, 200)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        ok = torch.allclose(gemm(a, b).float(), a.float() @ b.float(), atol=1e-1, rtol=1e-2)
        print(f"M={m} N={n} K={k}: {'PASS' if ok else 'FAIL'}")
