import sys

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 8, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 2, "BLOCK_N": 256}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=8),
    ],
    key=["M", "N"],
    restore_value=["x_ptr"],
)
@triton.jit
def residual_add_inplace_kernel(
    x_ptr, res_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_rm, stride_rn,
    alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """x[m, n] += alpha * res[m, n], in place."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn
    r_ptrs = res_ptr + rm[:, None] * stride_rm + rn[None, :] * stride_rn
    x = tl.load(x_ptrs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptrs, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptrs, (x + alpha * r).to(x_ptr.dtype.element_ty), mask=mask)  # expect: GR001


def residual_add_(x: torch.Tensor, res: torch.Tensor, alpha: float = 1.0):
    M, N = x.shape
    assert res.shape == (M, N)
    grid = lambda META: (M // META["BLOCK_M"], triton.cdiv(N, META["BLOCK_N"]))  # expect: GR001
    residual_add_inplace_kernel[grid](
        x, res, M, N,
        x.stride(0), x.stride(1),
        res.stride(0), res.stride(1),
        alpha,
    )
    return x


def reference(x, res, alpha):
    return (x.float() + alpha * res.float()).to(x.dtype)


if __name__ == "__main__":
    import _check as c

    def case(M, N, transposed_res):
        x = c.padded(torch.randn(M, N), col_pad=5)
        if transposed_res:
            res = c.padded(torch.randn(N, M)).t()
        else:
            res = c.padded(torch.randn(M, N), col_pad=3)
        want = reference(x, res, 0.5)
        residual_add_(x, res, 0.5)
        return c.close("x", x, want, atol=1e-5, rtol=1e-5)

    c.main(case, [(1, 1, False), (17, 100, False), (64, 64, True), (33, 300, True)])
