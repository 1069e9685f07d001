import sys

import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(
    A, B, C,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2)

    A += pid_b * stride_ab  # expect: MB003
    B += pid_b.to(tl.int64) * stride_bb
    C += pid_b.to(tl.int64) * stride_cb

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = A + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = B + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = C + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :].to(tl.int64) * stride_cn
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def bmm(a, b, out=None, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16):
    Bt, M, K = a.shape
    Bt2, K2, N = b.shape
    assert Bt == Bt2 and K == K2
    if out is None:
        out = torch.empty((Bt, M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), Bt)
    bmm_kernel[grid](
        a, b, out,
        M, N, K,
        a.stride(0), a.stride(1), a.stride(2),
        b.stride(0), b.stride(1), b.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out


def reference(a, b):
    return torch.bmm(a.float(), b.float()).to(a.dtype)


if __name__ == "__main__":
    import _check as c

    def case(Bt, M, N, K, huge):
        if huge:
            # batches 2**30 elements apart: pid_b * stride_ab passes 2**31 at batch 2
            a = c.sparse_view((Bt, M, K), (1 << 30, K, 1), torch.float16)
        else:
            a = c.padded(torch.randn(Bt, M, K).half(), col_pad=4)
        b = c.padded(torch.randn(Bt, N, K).half()).transpose(1, 2)
        out = c.poisoned((Bt, M, N), torch.float16, col_pad=2)
        bmm(a, b, out)
        return c.close("c", out, reference(a, b), atol=2e-2, rtol=1e-2)

    c.main(case, [(1, 1, 1, 1, False), (3, 40, 33, 50, False), (2, 64, 64, 16, False), (4, 17, 70, 35, False), (3, 8, 8, 16, True)])
