import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_desc_kernel(x_ptr, s_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y[m, :] = x[m, :] * s[m] through tensor descriptors, which clip the tiles at the edges."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_xm, 1], block_shape=[BLOCK_M, BLOCK_N])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_ym, 1], block_shape=[BLOCK_M, BLOCK_N])
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    s = tl.load(s_ptr + rm)  # expect: MB001
    x = x_desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], (x * s[:, None]).to(y_ptr.dtype.element_ty))


def scale_rows(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    assert x.stride(1) == 1 and s.shape == (M,)
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    scale_rows_desc_kernel[grid](x, s, y, M, N, x.stride(0), y.stride(0), BLOCK_M=64, BLOCK_N=64)
    return y
