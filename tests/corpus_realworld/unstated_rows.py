# cause L1: `rstd` comes from the forward pass and `dy` is never unpacked; `dx = torch.empty_like(dy)` inherits dy's unstated shape. Their extents are the caller's contract, not the launcher's.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def norm_backward_rows(
    dy, dy_stride, x, x_stride, w, rstd, dx, dx_stride, dw_partial, n_rows, n_cols,
    rows_per_program, BLOCK: tl.constexpr,
):
    """Each program takes a run of rows and leaves one partial weight gradient."""
    pid = tl.program_id(0).to(tl.int64)
    first = pid * rows_per_program
    last = tl.minimum(first + rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    weight = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK], dtype=tl.float32)
    dy += first * dy_stride
    x += first * x_stride
    dx += first * dx_stride
    for row in range(first, last):
        g = tl.load(dy + cols, mask=mask, other=0.0).to(tl.float32)
        v = tl.load(x + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(rstd + row)
        gw = g * weight
        dot = tl.sum(gw * v, axis=0) / n_cols
        tl.store(dx + cols, r * gw - (r * r * r) * dot * v, mask=mask)
        dw_acc += g * v * r
        dy += dy_stride
        x += x_stride
        dx += dx_stride
    tl.store(dw_partial + pid * n_cols + cols, dw_acc, mask=mask)


def norm_backward(dy, x, w, rstd, programs=3):
    n_rows, n_cols = x.shape
    dx = torch.empty_like(dy)
    dw_partial = torch.empty((programs, n_cols), dtype=torch.float32, device=x.device)
    per = math.ceil(n_rows / programs)
    norm_backward_rows[(programs,)](
        dy, dy.stride(0), x, x.stride(0), w, rstd, dx, dx.stride(0), dw_partial,
        n_rows, n_cols, per, BLOCK=triton.next_power_of_2(n_cols),
    )
    return dx, dw_partial.sum(0)


if __name__ == "__main__":
    x = torch.randn(7, 20, requires_grad=True)
    w = torch.randn(20, requires_grad=True)
    rstd = torch.rsqrt(x.detach().pow(2).mean(-1) + 1e-6)
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    dy = torch.randn(7, 20)
    y.backward(dy)
    dx, dw = norm_backward(dy, x.detach(), w.detach(), rstd)
    torch.testing.assert_close(dx, x.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dw, w.grad, atol=1e-4, rtol=1e-4)
    print("ok")
