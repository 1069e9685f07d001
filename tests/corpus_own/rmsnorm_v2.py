import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_fwd(
    X, W, Y, RSTD,
    stride_x, stride_y,
    N, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    X += row * stride_x
    Y += row * stride_y
    # pass 1: mean of squares, fp32 accumulation
    _sq = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(X + cols, mask=cols < N).to(tl.float32)  # expect: MB004
        _sq += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(_sq, axis=0) / N + eps)  # expect: MB004
    tl.store(RSTD + row, rstd)
    # pass 2: normalize and scale
    for off in tl.range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + cols, mask=mask).to(tl.float32)
        w = tl.load(W + cols, mask=mask)
        y = x * rstd * w
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


def rmsnorm(x, weight, eps=1e-6, out=None, rstd=None):
    M, N = x.shape
    assert x.stride(1) == 1 and weight.is_contiguous()
    if out is None:
        out = torch.empty_like(x)
    if rstd is None:
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    BLOCK_N = min(triton.next_power_of_2(N), 256)
    _rmsnorm_fwd[(M,)](x, weight, out, rstd, x.stride(0), out.stride(0), N, eps, BLOCK_N=BLOCK_N)
    return out, rstd


def reference(x, weight, eps=1e-6):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1) + eps)
    return (xf * rstd[:, None] * weight.float()).to(x.dtype), rstd


if __name__ == "__main__":
    import _check as c

    def case(M, N, scale):
        x = c.padded((torch.randn(M, N) * scale).half(), col_pad=7)
        w = c.padded(torch.rand(N).half() + 0.5)
        y = c.poisoned((M, N), torch.float16, col_pad=1)
        r = c.poisoned((M,), torch.float32)
        rmsnorm(x, w, out=y, rstd=r)
        y_ref, r_ref = reference(x, w)
        return c.close("y", y, y_ref, atol=1e-2, rtol=1e-2) + c.close("rstd", r, r_ref, atol=1e-6, rtol=1e-3)

    c.main(case, [(1, 1, 1.0), (3, 100, 1.0), (4, 256, 2.0), (5, 1000, 1.0), (2, 4096, 40.0)])
