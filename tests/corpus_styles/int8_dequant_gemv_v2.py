import torch
import triton
import triton.language as tl


@triton.jit
def int8_gemv_kernel(w_ptr, scale_ptr, x_ptr, y_ptr, N, K, stride_wn, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    """y = dequant(W) @ x with W int8 [N, K] and one fp32 scale per output row."""
    pid = tl.program_id(0)
    rn = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = rn < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        k_mask = rk < K
        w = tl.load(w_ptr + rn[:, None].to(tl.int64) * stride_wn + rk[None, :],
                    mask=n_mask[:, None] & k_mask[None, :], other=0)
        x = tl.load(x_ptr + rk, mask=k_mask, other=0.0).to(tl.float32)
        acc += tl.sum(w.to(tl.float32) * x[None, :], axis=1)
    scale = tl.load(scale_ptr + rn * K, mask=n_mask, other=0.0)  # expect: MB001  # also: MB003
    tl.store(y_ptr + rn, acc * scale, mask=n_mask)


def int8_gemv(w: torch.Tensor, scale: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    N, K = w.shape
    assert w.dtype == torch.int8 and scale.shape == (N,) and x.shape == (K,)
    y = torch.empty((N,), device=x.device, dtype=torch.float32)
    BLOCK_N = 32
    int8_gemv_kernel[(triton.cdiv(N, BLOCK_N),)](w, scale, x, y, N, K, w.stride(0), BLOCK_N=BLOCK_N, BLOCK_K=128)
    return y
