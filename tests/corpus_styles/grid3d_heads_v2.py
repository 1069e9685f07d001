import torch
import triton
import triton.language as tl


@triton.jit
def head_rmsnorm_kernel(x_ptr, w_ptr, y_ptr, T, D, stride_xb, stride_xh, stride_xt, stride_yb, stride_yh,
                        stride_yt, eps, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    """RMS-normalise each head vector of x[B, H, T, D] over D; a 3-D grid (T tiles, heads, batch)."""
    pid_t = tl.program_id(0)
    pid_h = tl.program_id(1).to(tl.int64)
    pid_b = tl.program_id(2).to(tl.int64)
    offs_t = (pid_t * BLOCK_T + tl.arange(0, BLOCK_T)).to(tl.int64)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_t[:, None] < T) & (offs_d[None, :] < D)
    x_base = x_ptr + pid_b * stride_xb + pid_h * stride_xh
    x = tl.load(x_base + offs_t[:, None] * stride_xt + offs_d[None, :], mask=mask, other=0.0).to(tl.float32)  # expect: MB001
    rms = tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    w = tl.load(w_ptr + offs_d, mask=offs_d < D, other=0.0).to(tl.float32)
    y = x / rms[:, None] * w[None, :]
    y_base = y_ptr + pid_b * stride_yb + pid_h * stride_yh
    tl.store(y_base + offs_t[:, None] * stride_yt + offs_d[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)  # expect: GR001, MB002


def head_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    B, H, T, D = x.shape
    assert x.stride(-1) == 1 and w.shape == (D,)
    y = torch.empty_like(x)
    BLOCK_T = 16
    grid = (triton.cdiv(T, BLOCK_T), B, H)
    head_rmsnorm_kernel[grid](x, w, y, T, D, x.stride(0), x.stride(1), x.stride(2), y.stride(0), y.stride(1),
                              y.stride(2), eps, BLOCK_T=BLOCK_T, BLOCK_D=triton.next_power_of_2(D))
    return y
