import torch
import triton
import triton.language as tl


@triton.jit
def gemv_splitn(a_ptr, x_ptr, y_ptr, M, N, stride_am, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :], mask=cols[None, :] < N, other=0.0)  # expect: MB001
    x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
    part = tl.sum(a.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.atomic_add(y_ptr + rows, part, mask=rows < M)


def gemv(a, x):
    M, N = a.shape
    y = torch.zeros((M,), dtype=torch.float32, device=a.device)
    gemv_splitn[(triton.cdiv(M, 32), triton.cdiv(N, 64))](a, x, y, M, N, a.stride(0), BLOCK_M=32, BLOCK_N=64)
    return y
