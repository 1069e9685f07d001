import sys

import torch
import triton
import triton.language as tl


@triton.autotune(  # expect: GR004
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 2}),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 16, "SPLIT_K": 4}),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def splitk_gemm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    # split pid_k owns the contiguous K range [k_start, k_end)
    k_per_split = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)

    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = k_start + tl.arange(0, BLOCK_K)
    A = a_ptr + rm[:, None] * stride_am + rk[None, :].to(tl.int64) * stride_ak
    B = b_ptr + rk[:, None].to(tl.int64) * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(k_start, k_end, BLOCK_K):
        k_ok = rk < k_end - (k - k_start)
        a = tl.load(A, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(B, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk

    C = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(C, acc, mask=mask, sem="relaxed")  # expect: GR004


def splitk_gemm(a, b, out=None):
    """fp32 C = A @ B, fp16 A (M, K), B (K, N)."""
    M, K = a.shape
    _, N = b.shape
    if out is None:
        out = torch.empty((M, N), dtype=torch.float32, device=a.device)
    out.zero_()
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]), META["SPLIT_K"])
    splitk_gemm_kernel[grid](
        a, b, out, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
    )
    return out


def reference(a, b):
    return a.float() @ b.float()


if __name__ == "__main__":
    import _check as c

    def case(M, N, K):
        a = c.padded(torch.randn(M, K).half(), col_pad=8)
        b = c.padded(torch.randn(K, N).half(), col_pad=8)
        problems = []
        for _ in range(2):
            out = c.poisoned((M, N))
            splitk_gemm(a, b, out)
            problems += c.close("c", out, reference(a, b), atol=1e-3, rtol=1e-3)
        return problems

    c.main(case, [(1, 1, 1), (16, 64, 20), (40, 50, 300), (70, 33, 129)])
